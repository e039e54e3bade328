import type { _Record } from "@aws-sdk/client-kinesis";
import {
  type BatchOutcome,
  type Deadline,
  deadlineFromContext,
  type PartialBatchResponse,
  processSqsBatch,
  type RemainingTime,
  sqsBatchResponse,
} from "@mcp-pipeline/batch";
import { type DecodeResult, failureCodeOf, messageOf, TransientError } from "@mcp-pipeline/contracts";
import { type QuarantineRecord, quarantineKeyFor } from "@mcp-pipeline/recovery/quarantine";
import type { SQSRecord } from "aws-lambda";
import { forEachBounded } from "./bounded.js";
import { decodeFailureRecord } from "./failure-record.js";
import type { KinesisFailureRecord } from "./failure-record-schema.js";
import type { RereadResult, SequenceRange } from "./reread.js";

export interface LostRange {
  readonly range: SequenceRange;
  readonly condition: string;
  /**
   * Records of the failed batch that the stream no longer held: at least this many. With a
   * ParallelizationFactor above 1 the range also holds other lanes' records (§1.2, §1.6), so the count
   * is a lower bound (at least 1: the range's start is gone).
   */
  readonly lost: number;
  readonly reason: string;
}

export interface FailureStoreDeps {
  readonly reread: (range: SequenceRange) => Promise<RereadResult>;
  /** Stores one record if it is not there yet; resolves to whether it wrote. */
  readonly quarantine: (record: QuarantineRecord) => Promise<{ key: string; written: boolean }>;
  /**
   * The quarantine keys that already exist under a key prefix (one LIST per 1,000 keys), so that a
   * retry of a failure record skips what an earlier attempt stored instead of starting over.
   */
  readonly storedKeys?: (prefix: string) => Promise<ReadonlySet<string>>;
  /**
   * Quarantine PUTs in flight at once for one failure record (ParallelizationFactor x BatchSize records).
   * Required: its default is dlq-redrive's QUARANTINE_PUT_CONCURRENCY, declared there once.
   */
  readonly putConcurrency: number;
  /** Keeps a message that is not an on-failure record for people (the failure queue's own DLQ). */
  readonly deadLetter: (record: SQSRecord, reason: { code: string; message: string }) => Promise<void>;
  readonly onLost: (lost: LostRange) => void;
  readonly functionName: string;
  readonly concurrency: number;
  readonly deadlineMarginMs: number;
  readonly now?: () => number;
}

export interface FailureStoreSummary {
  readonly messages: number;
  /** Records written to the quarantine. */
  readonly stored: number;
  /** Records that were already in the quarantine (a failure record seen twice, or a retry). */
  readonly alreadyStored: number;
  readonly lost: number;
  readonly deadLettered: number;
  readonly retried: number;
}

function commonPrefix(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i += 1;
  return a.slice(0, i);
}

/**
 * The narrowest key prefixes that cover `keys`: per folder (a shard's day), the common prefix of its
 * smallest and largest key. A range's sequence numbers share most of their digits, so the LIST reads
 * little beyond the range even in a folder that holds a whole day of records.
 */
export function coveringPrefixes(keys: readonly string[]): string[] {
  const byFolder = new Map<string, string[]>();
  for (const key of keys) {
    const folder = key.slice(0, key.lastIndexOf("/") + 1);
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), key]);
  }
  return [...byFolder.values()].map((folderKeys) => {
    const sorted = [...folderKeys].sort();
    return commonPrefix(sorted[0] as string, sorted.at(-1) as string);
  });
}

/** The quarantine record of one re-read record, with the ESM's failure context (§1.6). */
export function quarantineRecordOf(
  record: _Record,
  failure: KinesisFailureRecord,
  quarantinedBy: string,
  now: number,
): QuarantineRecord {
  const info = failure.KinesisBatchInfo;
  return {
    formatVersion: 1,
    source: {
      kind: "kinesis",
      streamArn: info.streamArn,
      shardId: info.shardId,
      sequenceNumber: record.SequenceNumber ?? "",
      partitionKey: record.PartitionKey ?? "",
      approximateArrivalTimestamp: (record.ApproximateArrivalTimestamp?.getTime() ?? now) / 1000,
    },
    data: Buffer.from(record.Data ?? new Uint8Array()).toString("base64"),
    reason: {
      code: failure.requestContext.condition,
      message: `the processor's event source mapping gave up on this record (${failure.requestContext.condition} after ${failure.requestContext.approximateInvokeCount} invocations)`,
    },
    failure: {
      condition: failure.requestContext.condition,
      approximateInvokeCount: failure.requestContext.approximateInvokeCount,
      functionError: failure.responseContext?.functionError ?? null,
      requestId: failure.requestContext.requestId,
      functionArn: failure.requestContext.functionArn,
      timestamp: failure.timestamp,
    },
    quarantinedAt: new Date(now).toISOString(),
    quarantinedBy,
  };
}

/**
 * dlq-redrive's core: for each on-failure record in the batch, re-read its range from the stream at
 * once (before retention trims it) and store every record in the quarantine with the failure context.
 * Records the stream no longer holds are reported as lost; messages that are not on-failure records go
 * to the failure queue's DLQ with their reason. Transient failures are reported by messageId (§2.3).
 */
export async function storeFailureRecords(
  records: readonly SQSRecord[],
  context: RemainingTime,
  deps: FailureStoreDeps,
): Promise<{
  response: PartialBatchResponse;
  summary: FailureStoreSummary;
  outcome: BatchOutcome<SQSRecord>;
}> {
  const tally: StoreTally = { stored: 0, alreadyStored: 0, lost: 0 };
  const decoded: DecodeResult<KinesisFailureRecord>[] = records.map((r) => decodeFailureRecord(r.body));
  const deadline = deadlineFromContext(context, deps.deadlineMarginMs);
  const outcome = await processSqsBatch(records, {
    concurrency: deps.concurrency,
    deadline,
    handle: async (_record, { index }) => {
      const result = decoded[index] as DecodeResult<KinesisFailureRecord>;
      if (!result.ok) throw result.error;
      await storeFailure(result.value, deps, deadline, tally);
    },
    setAside: (record, error) =>
      deps.deadLetter(record, { code: failureCodeOf(error), message: messageOf(error) }),
  });
  return {
    response: sqsBatchResponse(outcome),
    outcome,
    summary: {
      messages: records.length,
      ...tally,
      deadLettered: outcome.counts["set-aside"],
      retried: outcome.counts.failed + outcome.counts["not-started"],
    },
  };
}

/** Records of the batch's failure records, counted as they are stored, found stored or lost. */
interface StoreTally {
  stored: number;
  alreadyStored: number;
  lost: number;
}

/** One on-failure record: its range re-read, every record not yet stored stored, what is gone reported. */
async function storeFailure(
  failure: KinesisFailureRecord,
  deps: FailureStoreDeps,
  deadline: Deadline,
  tally: StoreTally,
): Promise<void> {
  const now = deps.now ?? Date.now;
  const info = failure.KinesisBatchInfo;
  const range = {
    streamArn: info.streamArn,
    shardId: info.shardId,
    start: info.startSequenceNumber,
    end: info.endSequenceNumber,
  };
  const reread = await deps.reread(range);
  const toStore = reread.records.map((record) =>
    quarantineRecordOf(record, failure, deps.functionName, now()),
  );
  const pending = await notYetStored(deps, toStore);
  tally.alreadyStored += toStore.length - pending.length;
  await storePending(deps, deadline, range, pending, tally);
  // A range whose start is no longer served has lost records, whatever fills the count: with a
  // ParallelizationFactor above 1 the range holds other lanes' records too (§1.2, §1.6).
  // Reported once the message is done, so a retry after the deadline does not count it twice.
  if (reread.gap !== undefined) {
    const missing = Math.max(1, info.batchSize - reread.records.length);
    tally.lost += missing;
    deps.onLost({
      range,
      condition: failure.requestContext.condition,
      lost: missing,
      reason: reread.gap,
    });
  }
}

/**
 * A retry continues where the last attempt stopped: what is already stored is skipped, found
 * with a LIST of the range's key prefix rather than one request per record.
 */
async function notYetStored(
  deps: FailureStoreDeps,
  toStore: readonly QuarantineRecord[],
): Promise<QuarantineRecord[]> {
  const existing = new Set<string>();
  if (deps.storedKeys) {
    const prefixes = coveringPrefixes(toStore.map((r) => quarantineKeyFor(r.source)));
    for (const prefix of prefixes) for (const key of await deps.storedKeys(prefix)) existing.add(key);
  }
  return toStore.filter((r) => !existing.has(quarantineKeyFor(r.source)));
}

async function storePending(
  deps: FailureStoreDeps,
  deadline: Deadline,
  range: SequenceRange,
  pending: readonly QuarantineRecord[],
  tally: StoreTally,
): Promise<void> {
  let storedHere = 0;
  await forEachBounded(pending, deps.putConcurrency, async (record) => {
    // ~800 records per failure record at factor 4 x batch 200: stop before the function's timeout,
    // and let the retry (this message reported failed, §2.3) store the rest.
    if (deadline.reached()) {
      throw new TransientError(
        "deadline-reached",
        `stored ${storedHere} of ${pending.length} records of ${range.shardId} ${range.start}..${range.end} before the deadline; the retry continues from there`,
      );
    }
    const { written } = await deps.quarantine(record);
    storedHere += 1;
    if (written) tally.stored += 1;
    else tally.alreadyStored += 1;
  });
}
