import { once, type RequestOptions, sdkRetryBases } from "@mcp-pipeline/aws";
import {
  type BatchOutcome,
  deadlineErrorOf,
  deadlineFromContext,
  kinesisBatchResponse,
  type PartialBatchResponse,
  processKinesisBatch,
  type RemainingTime,
  withRequestDeadlines,
} from "@mcp-pipeline/batch";
import type { BatchReport, Sandbox } from "@mcp-pipeline/batch/consumer-shell";
import {
  arrivalSecondsOf,
  type DecodeResult,
  decodeLifecycleEvent,
  decodeRecord,
  failureCodeOf,
  kinesisRecordIssues,
  MalformedRecordError,
  messageOf,
  SchemaViolationError,
  sequenceNumberOf,
  type ToolCallLifecycleEvent,
} from "@mcp-pipeline/contracts";
import type { QuarantineReason } from "@mcp-pipeline/recovery/quarantine";
import {
  type ApplyChange,
  type CallCache,
  type Folded,
  ToolCallStore,
  type ToolCallStoreOptions,
} from "@mcp-pipeline/tool-calls";
import type { KinesisStreamRecord } from "aws-lambda";
import type { ProcessorConfig } from "./config.js";

/** The decoded events of one call in a batch, in shard order. */
export interface CallEvents {
  readonly events: ToolCallLifecycleEvent[];
  /** `indices[i]` is the batch index of `events[i]`, ascending. */
  readonly indices: number[];
}

export interface Grouped {
  readonly calls: ReadonlyMap<string, CallEvents>;
  /** `positionOf[index]`: where a record's event sits among its call's events (-1: undecodable). */
  readonly positionOf: readonly number[];
}

/** Groups a batch's decodable events by `callId`, keeping shard order within each call. */
export function groupByCall(decoded: readonly DecodeResult<ToolCallLifecycleEvent>[]): Grouped {
  const calls = new Map<string, CallEvents>();
  const positionOf = decoded.map((result, index) => {
    if (!result.ok) return -1;
    const event = result.value;
    let call = calls.get(event.callId);
    if (!call) {
      call = { events: [], indices: [] };
      calls.set(event.callId, call);
    }
    call.events.push(event);
    call.indices.push(index);
    return call.events.length - 1;
  });
  return { calls, positionOf };
}

/** Everything the core needs, injected: processorDeps wires real clients, tests wire emulators. */
export interface ProcessorDeps {
  readonly toolCalls: Pick<ToolCallStore, "applyEvents" | "prefetch">;
  /**
   * Durably stores a record that can never succeed; resolves once stored. `options.signal` aborts its
   * request at the invocation's deadline, as every other request's (a hung S3 write would otherwise run the
   * invocation into its timeout); the record then fails and the checkpoint stops at it (§1.4).
   */
  readonly quarantine: (
    record: KinesisStreamRecord,
    reason: QuarantineReason,
    options?: RequestOptions,
  ) => Promise<void>;
  readonly concurrency: number;
  readonly deadlineMarginMs: number;
  /** Called when a batch pre-read fails; processing continues with per-call reads. */
  readonly onPrefetchError?: (error: unknown) => void;
  readonly now?: () => number;
}

export interface BatchSummary {
  readonly records: number;
  /** Events that changed their call. */
  readonly applied: number;
  /** Events that changed nothing: seen before (redelivered, producer retry) or dominated by what is stored. */
  readonly duplicates: number;
  readonly quarantined: number;
  /** Reported for retry: transient failures plus records not started. */
  readonly failed: number;
  readonly notStarted: number;
  readonly durationMs: number;
  /** Age of the oldest record in the batch when the batch started, in ms. */
  readonly oldestRecordAgeMs: number;
  readonly deadlineReached: boolean;
}

export interface ProcessResult {
  readonly response: PartialBatchResponse;
  readonly summary: BatchSummary;
  readonly outcome: BatchOutcome<KinesisStreamRecord>;
}

function reasonOf(error: unknown): QuarantineReason {
  return {
    code: failureCodeOf(error),
    message: messageOf(error),
    ...(error instanceof SchemaViolationError || error instanceof MalformedRecordError
      ? { details: { issues: error.issues } }
      : {}),
  };
}

async function prefetch(
  deps: ProcessorDeps,
  callIds: readonly string[],
  requests: RequestOptions,
): Promise<CallCache> {
  try {
    return await deps.toolCalls.prefetch(callIds, requests);
  } catch (error) {
    // The pre-read only saves requests; without it every call reads for itself.
    deps.onPrefetchError?.(error);
    return new Map();
  }
}

const changedCall = (change: ApplyChange): boolean => change === "created" || change === "updated";

/**
 * The processor's core: decode every record, fold all the events of each call in the batch onto the
 * pre-read state and write each call once (conditionally on the version read), quarantine what can
 * never succeed, and answer Lambda with the partial batch response (docs/aws-semantics.md §1.4).
 *
 * The effect is a join (docs/idempotency.md), so it is its own idempotency: a redelivered or dominated
 * event changes nothing and costs no write, and no dedupe table is needed. The engine still runs the
 * records of one partition key in shard order and starts nothing after a transient failure (§1.4
 * "Checkpoint rule"); a record "runs" by awaiting its call's single write, which the call's first
 * record starts. That write may reflect events that lie after a failure in the shard: they are reported
 * for retry anyway and their redelivery changes nothing, so "done" never names an event not applied.
 */
export function processToolCallEvents(
  records: readonly KinesisStreamRecord[],
  context: RemainingTime,
  deps: ProcessorDeps,
): Promise<ProcessResult> {
  return processDecodedBatch(records, context, deps, async (decoded, requests) => {
    const { calls, positionOf } = groupByCall(decoded);
    const cache = await prefetch(deps, [...calls.keys()], requests);

    /** One write per call, started by the first of its records that the engine runs, shared by the rest. */
    const writes = new Map<string, Promise<Folded>>();
    const writeOf = (callId: string): Promise<Folded> => {
      let write = writes.get(callId);
      if (!write) {
        const group = calls.get(callId);
        write = deps.toolCalls.applyEvents(group?.events ?? [], cache, requests);
        writes.set(callId, write);
      }
      return write;
    };

    return async (event, index) => {
      const folded = await writeOf(event.callId);
      // A failed write rejects here for every record of the call that runs: exactly that call's events fail.
      const change = folded.changes[positionOf[index] ?? -1];
      return change !== undefined && changedCall(change);
    };
  });
}

/** Applies one decoded event (the record at `index` of the batch); resolves whether it changed its call. */
export type ApplyEvent = (event: ToolCallLifecycleEvent, index: number) => Promise<boolean>;

/**
 * What every processing algorithm shares: decode every record, let `prepare` read ahead for the batch,
 * run each decodable event through the engine (partition-key order, the deadline) with the `ApplyEvent`
 * it returns, quarantine what can never succeed, and sum the batch up. The benchmark's per-event path
 * (tools/bench/src/processor/per-event-path.ts) runs in this same frame, so the two differ only in how an event is applied.
 *
 * `prepare` gets the options to give every request (RequestOptions): their signal aborts what is still
 * open at the invocation's deadline (requestDeadlines, @mcp-pipeline/batch). The record waiting on an
 * aborted write then fails transiently and the checkpoint stops before it (§1.4 "Checkpoint rule"),
 * instead of the invocation timing out and the whole batch being retried (§1.3 "During invocation").
 */
export async function processDecodedBatch(
  records: readonly KinesisStreamRecord[],
  context: RemainingTime,
  deps: Pick<ProcessorDeps, "quarantine" | "concurrency" | "deadlineMarginMs" | "now">,
  prepare: (
    decoded: readonly DecodeResult<ToolCallLifecycleEvent>[],
    requests: RequestOptions,
  ) => Promise<ApplyEvent>,
): Promise<ProcessResult> {
  return withRequestDeadlines(context, deps.deadlineMarginMs, (deadlines) =>
    processWithin(records, context, deps, prepare, deadlines.requests),
  );
}

async function processWithin(
  records: readonly KinesisStreamRecord[],
  context: RemainingTime,
  deps: Pick<ProcessorDeps, "quarantine" | "concurrency" | "deadlineMarginMs" | "now">,
  prepare: Parameters<typeof processDecodedBatch>[3],
  signal: AbortSignal,
): Promise<ProcessResult> {
  const now = deps.now ?? Date.now;
  const startedAt = now();
  // A record that cannot be read (no `kinesis.data`, a field of the wrong type) is its own permanent
  // failure, quarantined like a bad payload: never a throw here, which would fail its batch-mates (issue 24).
  const decoded: DecodeResult<ToolCallLifecycleEvent>[] = records.map((r) =>
    decodeRecord(r, kinesisRecordIssues, (record) => decodeLifecycleEvent(record.kinesis.data)),
  );
  const apply = await prepare(decoded, { signal });

  let applied = 0;
  let duplicates = 0;
  const outcome = await processKinesisBatch(records, {
    concurrency: deps.concurrency,
    deadline: deadlineFromContext(context, deps.deadlineMarginMs),
    handle: async (_record, { index }) => {
      const result = decoded[index] as DecodeResult<ToolCallLifecycleEvent>;
      if (!result.ok) throw result.error;
      let changed: boolean;
      try {
        changed = await apply(result.value, index);
      } catch (error) {
        throw deadlineErrorOf(error, signal);
      }
      if (changed) applied += 1;
      else duplicates += 1;
    },
    setAside: (record, error) => deps.quarantine(record, reasonOf(error), { signal }),
  });

  const oldestArrival = Math.min(...records.flatMap((r) => (arrivalSecondsOf(r) ?? startedAt / 1000) * 1000));
  const failed = outcome.counts.failed + outcome.counts["not-started"];
  return {
    response: kinesisBatchResponse(outcome),
    outcome,
    summary: {
      records: records.length,
      applied,
      duplicates,
      quarantined: outcome.counts["set-aside"],
      failed,
      notStarted: outcome.counts["not-started"],
      durationMs: now() - startedAt,
      oldestRecordAgeMs: records.length > 0 ? Math.max(0, startedAt - oldestArrival) : 0,
      deadlineReached: outcome.deadlineReached,
    },
  };
}

/**
 * The core's dependencies from the configuration, built once per sandbox by the consumer shell. The
 * DynamoDB client is injected; the quarantine is the rare path, so the S3 client and the quarantine
 * writer load on the first bad record, not at import (quarantine-writer.ts, docs/benchmarks/cold-start.md).
 */
export function processorDeps(
  config: ProcessorConfig,
  { logger, functionName }: Sandbox,
  dynamo: ToolCallStoreOptions["client"],
): ProcessorDeps {
  const writer = once(async () => {
    const rare = await import("./quarantine-writer.js");
    return { ...rare, client: rare.s3Client({ retryBases: sdkRetryBases(config) }) };
  });
  return {
    toolCalls: new ToolCallStore({ client: dynamo, tableName: config.TOOL_CALLS_TABLE }),
    quarantine: async (record, reason, options = {}) => {
      const { kinesisDataOf, kinesisSourceOf, writeQuarantineRecord, client } = await writer();
      const now = Date.now();
      const { key } = await writeQuarantineRecord(
        client,
        config.QUARANTINE_BUCKET,
        {
          formatVersion: 1,
          // A malformed record is quarantined with what it has (kinesisSourceOf says what stands in for
          // what it lacks); one without a sequence number cannot be, and is retried with its batch (§1.4).
          source: kinesisSourceOf(record, now),
          data: kinesisDataOf(record),
          reason,
          quarantinedAt: new Date(now).toISOString(),
          quarantinedBy: functionName,
        },
        options,
      );
      logger.warn("record quarantined", { sequenceNumber: sequenceNumberOf(record), reason, key });
    },
    concurrency: config.PROCESSOR_CONCURRENCY,
    deadlineMarginMs: config.DEADLINE_MARGIN_MS,
    onPrefetchError: (error) => logger.warn("batch pre-read failed; reading per call", { error }),
  };
}

/** How the shell reports a batch: what became of its records, how long it took and how old it was. */
export const processorReport: BatchReport<BatchSummary> = {
  failure: "record not processed",
  summary: "batch processed",
  metrics: (summary) => ({
    Records: ["Count", summary.records],
    Applied: ["Count", summary.applied],
    Duplicates: ["Count", summary.duplicates],
    Quarantined: ["Count", summary.quarantined],
    Failed: ["Count", summary.failed],
    BatchDuration: ["Milliseconds", summary.durationMs],
    OldestRecordAge: ["Milliseconds", summary.oldestRecordAgeMs],
  }),
};
