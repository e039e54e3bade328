import type { KinesisClient } from "@aws-sdk/client-kinesis";
import type { S3Client } from "@aws-sdk/client-s3";
import { OrderingMode, putRecords } from "@mcp-pipeline/aws";
import { sleep as realSleep, type Sleep } from "@mcp-pipeline/retry";
import { forEachBounded } from "./bounded.js";
import { FailureKind } from "./failure-kind.js";
import { InterruptedError, interruption, pause } from "./interrupted.js";
import { markReplayed, type QuarantineEntry, sameRecordGroups } from "./quarantine-ops.js";
import {
  JOURNAL_READ_CONCURRENCY,
  type JournalObject,
  REPLAY_JOURNAL_FORMAT_VERSION,
  replayJournalKey,
  splitJournal,
  writeReplayJournal,
} from "./replay-journal.js";

/** One record a replay would put back, with the objects its write marks. */
export interface ReplayItem {
  /** The record's first matching object: its bytes and partition key are put back, its position orders it. */
  readonly entry: QuarantineEntry;
  /** Every object of the record that no replay has marked: all are marked once the record is written. */
  readonly unmarked: readonly string[];
  /** The reason of the record's latest unmarked failure, and whether a replay can help with it. */
  readonly reason: string;
  readonly kind: FailureKind;
  /** A replay put it back before and it failed again (a new object under its new position). */
  readonly givenUpAgain: boolean;
}

export interface ReplayPlanOptions {
  /**
   * Put back records whose reason is permanent too (bad-json, schema-violation...: the processor refused
   * the bytes). Off by default: they fail again the same way unless the processor has changed.
   */
  readonly includePermanent?: boolean;
  /** At most this many records (the first, in shard and sequence order); the rest wait for the next run. */
  readonly max?: number;
}

export interface ReplayPlan {
  /** Distinct records matched (a record quarantined again after a replay is one record). */
  readonly matched: number;
  /** Records every matching object of which a replay has put back: nothing of them waits. */
  readonly alreadyReplayed: number;
  /** What this run puts back, in shard then sequence order (per key, the original order). */
  readonly items: readonly ReplayItem[];
  /** Waiting records whose reason is permanent, left because `includePermanent` is off. */
  readonly skippedPermanent: readonly ReplayItem[];
  /** Waiting records beyond `max`: for the next run. */
  readonly leftByMax: number;
  /** Records this run puts back, by reason. */
  readonly byReason: Readonly<Record<string, number>>;
}

/** Records of a chunk whose objects are marked at once (as many as a scan reads at once). */
const MARK_CONCURRENCY = 16;

const latest = (entries: readonly QuarantineEntry[]) =>
  entries.reduce((a, b) => (b.record.quarantinedAt > a.record.quarantinedAt ? b : a));

/**
 * Which matched records a replay puts back. A record waits while one of its matching objects is not
 * marked: never replayed, or replayed and given up again since (a new object under the position the
 * replay gave it). Marks are per object, so a record that failed again after its replay is not "already
 * replayed": nothing that failed becomes unreachable. A record whose waiting failure is permanent is
 * left unless asked for; `max` keeps the first records.
 */
export function planReplay(entries: readonly QuarantineEntry[], options: ReplayPlanOptions = {}): ReplayPlan {
  const groups = sameRecordGroups(entries);
  const waiting: ReplayItem[] = [];
  let alreadyReplayed = 0;
  for (const group of groups) {
    const unmarkedMatching = group.filter((e) => e.replayedAt === undefined);
    if (unmarkedMatching.length === 0) {
      alreadyReplayed += 1;
      continue;
    }
    const first = group[0] as QuarantineEntry;
    const failure = latest(unmarkedMatching);
    waiting.push({
      entry: first,
      unmarked: first.objects.filter((o) => o.replayedAt === undefined).map((o) => o.key),
      reason: failure.record.reason.code,
      kind: failure.kind,
      givenUpAgain: first.objects.some((o) => o.replayedAt !== undefined),
    });
  }
  const wanted = waiting.filter((i) => options.includePermanent || i.kind !== FailureKind.Permanent);
  const skippedPermanent = waiting.filter((i) => !wanted.includes(i));
  const items = options.max === undefined ? wanted : wanted.slice(0, options.max);
  const byReason: Record<string, number> = {};
  for (const item of items) byReason[item.reason] = (byReason[item.reason] ?? 0) + 1;
  return {
    matched: groups.length,
    alreadyReplayed,
    items,
    skippedPermanent,
    leftByMax: wanted.length - items.length,
    byReason,
  };
}

export interface ReplayOptions extends ReplayPlanOptions {
  readonly streamName: string;
  readonly dryRun?: boolean;
  /** Records per second at most. */
  readonly ratePerSecond?: number;
  readonly onProgress?: (done: number, total: number) => void;
  /** Each record put back, with its new sequence number (for a caller that waits for it to be read). */
  readonly onWritten?: (sequenceNumber: string) => void;
  /** The account that must own the bucket (S3 refuses the marks' writes otherwise). */
  readonly expectedBucketOwner?: string;
  readonly now?: () => number;
  readonly sleep?: Sleep;
  /**
   * An abort stops the replay between chunks, once the chunk written is marked (never between a write
   * and its mark): it ends with a ReplayIncompleteError whose `interrupted` is true.
   */
  readonly signal?: AbortSignal;
  /**
   * Each chunk's journal (replay-journal.ts): its key and how many objects it names once stored, or the
   * error S3 answered. A journal not stored loses nothing: the objects are marked, and the next scan
   * reads them in full, as before journals.
   */
  readonly onJournal?: (outcome: JournalOutcome) => void;
}

export type JournalOutcome =
  | { readonly written: true; readonly key: string; readonly objects: number }
  | { readonly written: false; readonly key: string; readonly error: Error };

export interface ReplaySummary {
  /** Distinct records matched (a record quarantined again after a replay is one record). */
  readonly matched: number;
  /** Records already put back, none of them given up again since. */
  readonly alreadyReplayed: number;
  /** Records put back by this run (0 for a dry run). */
  readonly replayed: number;
  /** Records this run puts back (or would, for a dry run), after `max`. */
  readonly toReplay: number;
  /** Of those, records that a replay had put back before and that failed again. */
  readonly givenUpAgain: number;
  /** Waiting records with a permanent reason, not put back (`includePermanent` off). */
  readonly skippedPermanent: number;
  /** Waiting records beyond `max`. */
  readonly leftByMax: number;
  /** Records to put back, by reason. */
  readonly byReason: Readonly<Record<string, number>>;
  readonly dryRun: boolean;
}

/**
 * Some records were not put back: `replayed` were written and marked; `cause` says why the rest were
 * not, and `advice` what to do (a throttled write is worth running again; a missing stream is not).
 * `unmarked` were written but their mark failed (S3 refused the tagging): they still wait, and the same
 * replay again puts them back once more (the processor skips an eventId it applied).
 */
export class ReplayIncompleteError extends Error {
  readonly replayed: number;
  readonly remaining: number;
  readonly unmarked: number;
  readonly advice: string;
  /** A person stopped it (its cause is an InterruptedError), not a failure. */
  readonly interrupted: boolean;

  constructor(
    replayed: number,
    remaining: number,
    reason: string,
    advice: string,
    options?: ErrorOptions & { readonly unmarked?: { readonly count: number; readonly streamName: string } },
  ) {
    const unmarked = options?.unmarked;
    super(
      `${remaining} records were not put back (${reason}); ${replayed} were, and are marked${unmarked && unmarked.count > 0 ? `; ${unmarked.count} were put back into ${unmarked.streamName} but not marked: they still wait, and the same replay again puts them back once more (the processor skips an eventId it applied)` : ""}. ${advice}`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "ReplayIncompleteError";
    this.replayed = replayed;
    this.remaining = remaining;
    this.unmarked = unmarked?.count ?? 0;
    this.advice = advice;
    this.interrupted = options?.cause instanceof InterruptedError;
  }
}

/** Errors a later run can get past on its own, the same request being right. */
const TRANSIENT =
  /Throttl|ProvisionedThroughputExceeded|KMSThrottling|ServiceUnavailable|InternalFailure|Timeout|ECONN|socket/i;

function adviceFor(code: string, streamName: string): string {
  if (TRANSIENT.test(code)) return "Run the same replay again to continue: what is marked is skipped.";
  if (/AccessDenied|UnauthorizedOperation|NotAuthorized/i.test(code))
    return `The caller may not write to ${streamName} (kinesis:PutRecords): fix the permissions, then run the same replay again.`;
  if (/ResourceNotFound/i.test(code))
    return `The stream ${streamName} is not there: check --stream (a dry run checks it), then run again.`;
  return "Fix the cause, then run the same replay again: what is marked is skipped.";
}

function summaryOf(plan: ReplayPlan, replayed: number, dryRun: boolean): ReplaySummary {
  return {
    matched: plan.matched,
    alreadyReplayed: plan.alreadyReplayed,
    replayed,
    toReplay: plan.items.length,
    givenUpAgain: plan.items.filter((i) => i.givenUpAgain).length,
    skippedPermanent: plan.skippedPermanent.length,
    leftByMax: plan.leftByMax,
    byReason: plan.byReason,
    dryRun,
  };
}

/** What every chunk of one replay shares. */
interface ReplayRun {
  readonly s3: S3Client;
  readonly kinesis: KinesisClient;
  readonly bucket: string;
  readonly options: ReplayOptions;
  readonly now: () => number;
  /** Records this run puts back. */
  readonly total: number;
}

type Written = Awaited<ReturnType<typeof putRecords>>;

/** Puts a chunk back with its original bytes and partition keys, in order per key; nothing is marked yet. */
async function writeChunk(run: ReplayRun, batch: readonly ReplayItem[], replayed: number): Promise<Written> {
  try {
    return await putRecords(
      run.kinesis,
      { streamName: run.options.streamName },
      batch.map(({ entry }) => ({
        data: Buffer.from(entry.record.data, "base64"),
        partitionKey: entry.record.source.partitionKey,
      })),
      { ordering: OrderingMode.Strict },
    );
  } catch (error) {
    const code = (error as Error).name;
    throw new ReplayIncompleteError(
      replayed,
      run.total - replayed,
      `${code}: ${(error as Error).message}`,
      adviceFor(`${code} ${(error as Error).message}`, run.options.streamName),
      { cause: error },
    );
  }
}

/**
 * Marks every object of each record written, so the same replay again skips it. Returns the records
 * marked; a mark that fails ends the replay counting the chunk's records written but not marked.
 */
async function markChunk(
  run: ReplayRun,
  batch: readonly ReplayItem[],
  result: Written,
  replayedBefore: number,
  marks: Map<string, { readonly at: string; readonly sequenceNumber: string }>,
): Promise<number> {
  const { options } = run;
  // Each record's marks are independent of the others': marking them one by one bounded a replay by
  // S3's round trips (two per object, about 16 records/s through a faulty endpoint) instead of its rate.
  let marked = 0;
  try {
    await forEachBounded(result.written, MARK_CONCURRENCY, async (written) => {
      const { unmarked } = batch[written.index] as ReplayItem;
      for (const key of unmarked) {
        const at = new Date(run.now()).toISOString();
        await markReplayed(run.s3, run.bucket, key, {
          at,
          sequenceNumber: written.sequenceNumber,
          ...(options.expectedBucketOwner ? { expectedBucketOwner: options.expectedBucketOwner } : {}),
        });
        marks.set(key, { at, sequenceNumber: written.sequenceNumber });
      }
      marked += 1;
      options.onWritten?.(written.sequenceNumber);
    });
  } catch (error) {
    // Written, not marked: every record of the chunk whose marks did not all complete.
    const notMarked = result.written.length - marked;
    const replayed = replayedBefore + marked;
    const code = (error as Error).name;
    throw new ReplayIncompleteError(
      replayed,
      run.total - replayed - notMarked,
      `${code}: ${(error as Error).message}`,
      /AccessDenied|Forbidden/i.test(code)
        ? `The caller may not mark the objects (s3:GetObjectTagging, s3:PutObjectTagging on ${run.bucket}): fix the permissions, then run the same replay again.`
        : adviceFor(`${code} ${(error as Error).message}`, options.streamName),
      { cause: error, unmarked: { count: notMarked, streamName: options.streamName } },
    );
  }
  return marked;
}

/**
 * Once a chunk is marked, its journal: each object marked whose record the replay was given (an object of
 * the same record outside the filter was marked too, but its record was not read: the next scan reads it).
 * Written after every mark, never before, so that a journal names only what the tags say: a replay stopped
 * between its marks and its journal leaves marked objects that the next scan reads in full. A chunk of large
 * records is several journals, each under JOURNAL_MAX_BYTES (splitJournal); one that S3 refuses loses only
 * that its objects are read in full again.
 */
async function journalChunk(
  run: ReplayRun,
  marks: ReadonlyMap<string, { readonly at: string; readonly sequenceNumber: string }>,
  records: ReadonlyMap<string, QuarantineEntry>,
): Promise<void> {
  const objects: JournalObject[] = [];
  for (const [key, mark] of marks) {
    const entry = records.get(key);
    if (entry !== undefined)
      objects.push({
        key,
        record: entry.record,
        replayedAt: mark.at,
        replaySequenceNumber: mark.sequenceNumber,
      });
  }
  if (objects.length === 0) return;
  const at = run.now();
  const journals = splitJournal(
    {
      formatVersion: REPLAY_JOURNAL_FORMAT_VERSION,
      kind: "replay-journal",
      writtenAt: new Date(at).toISOString(),
      streamName: run.options.streamName,
    },
    objects,
  );
  // As many at once as a scan reads: each is up to JOURNAL_MAX_BYTES in memory while it is sent.
  await forEachBounded(journals, JOURNAL_READ_CONCURRENCY, async (journal) => {
    const key = replayJournalKey(at);
    try {
      await writeReplayJournal(run.s3, run.bucket, journal, {
        key,
        ...(run.options.expectedBucketOwner ? { expectedBucketOwner: run.options.expectedBucketOwner } : {}),
      });
      run.options.onJournal?.({ written: true, key, objects: journal.objects.length });
    } catch (error) {
      run.options.onJournal?.({ written: false, key, error: error as Error });
    }
  });
}

/**
 * Puts quarantined records back into the stream with their original partition keys and bytes, in
 * their original order per key (strict ordering), at most `ratePerSecond`, and marks each object of
 * a record once the record is written (tags, `replayed-at`), so the same replay again skips it
 * until it fails again; then each chunk's journal, so that the next scan need not read them again. The
 * processor's idempotency (by eventId) makes a replay safe even when a record had been applied before.
 */
export async function replayQuarantine(
  s3: S3Client,
  kinesis: KinesisClient,
  bucket: string,
  entries: readonly QuarantineEntry[],
  options: ReplayOptions,
): Promise<ReplaySummary> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? realSleep;
  const plan = planReplay(entries, options);
  if (options.dryRun) return summaryOf(plan, 0, true);
  const pending = plan.items;
  const run: ReplayRun = { s3, kinesis, bucket, options, now, total: pending.length };
  const rate = options.ratePerSecond ?? 100;
  const chunk = Math.max(1, Math.min(500, rate));
  const records = new Map(entries.map((e) => [e.key, e]));
  let replayed = 0;
  for (let i = 0; i < pending.length; i += chunk) {
    if (options.signal?.aborted) {
      const cause = interruption(options.signal);
      throw new ReplayIncompleteError(
        replayed,
        pending.length - replayed,
        cause.message,
        "Run the same replay again to continue: what is marked is skipped.",
        { cause },
      );
    }
    const started = now();
    const batch = pending.slice(i, i + chunk);
    const result = await writeChunk(run, batch, replayed);
    const marks = new Map<string, { readonly at: string; readonly sequenceNumber: string }>();
    replayed += await markChunk(run, batch, result, replayed, marks);
    await journalChunk(run, marks, records);
    options.onProgress?.(replayed, pending.length);
    if (result.rejected.length > 0) {
      const code = result.rejected[0]?.errorCode ?? "unknown";
      throw new ReplayIncompleteError(
        replayed,
        pending.length - replayed,
        `first: ${code}`,
        adviceFor(code, options.streamName),
      );
    }
    const elapsed = now() - started;
    const budget = (batch.length / rate) * 1000;
    if (i + chunk < pending.length && elapsed < budget) await pause(sleep, budget - elapsed, options.signal);
  }
  return summaryOf(plan, replayed, false);
}
