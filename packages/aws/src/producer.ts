import type { KinesisClient } from "@aws-sdk/client-kinesis";
import { messageOf, TransientError } from "@mcp-pipeline/contracts";
import { backoffDelayMs, Jitter, sleep as realSleep, type Sleep } from "@mcp-pipeline/retry";
import {
  type EntryError,
  type ProducerRecord,
  type RequestOutcome,
  type StreamTarget,
  sendPutRequest,
} from "./put-request.js";

/**
 * PutRecords limits: 500 records and 5 MiB a request, 1 MiB a record, partition keys included
 * (Kinesis API reference, PutRecords). Streams configured for larger records can raise them.
 */
export interface PutRecordsLimits {
  readonly maxRecords: number;
  readonly maxRequestBytes: number;
  readonly maxRecordBytes: number;
}

export const PUT_RECORDS_LIMITS: PutRecordsLimits = {
  maxRecords: 500,
  maxRequestBytes: 5 * 1024 * 1024,
  maxRecordBytes: 1024 * 1024,
};

/**
 * What the producer promises about order within a partition key:
 * - `relaxed`: records of a key go out in the order given and land in that order when every entry
 *   succeeds; an entry that Kinesis rejects is retried and then lands after later records of its key
 *   that were accepted in the same request. Use it when consumers do not depend on stream order
 *   (the processor folds events with a join, so order is irrelevant to it).
 * - `strict`: at most one record of a key is in flight at a time, so records of a key land in the
 *   order given, at the price of one round trip per record of the same key. Once a record of a key
 *   is given up (too large, attempts used, or refused for good), nothing after it of that key is
 *   sent: those records come back unsent (`UNSENT_AFTER_GIVEN_UP`), in order, so a rerun of the
 *   rejected records keeps the key's order.
 */
export const OrderingMode = { Relaxed: "relaxed", Strict: "strict" } as const;
export type OrderingMode = (typeof OrderingMode)[keyof typeof OrderingMode];

export interface PutRecordsOptions {
  /** Attempts per record, the first included. */
  readonly maxAttempts?: number;
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  readonly ordering?: OrderingMode;
  readonly limits?: PutRecordsLimits;
  readonly random?: () => number;
  readonly sleep?: Sleep;
  /**
   * Aborts the requests and the waits between rounds (an invocation's deadline). Records not written by
   * then come back rejected with the abort as their error; none is sent after it.
   */
  readonly signal?: AbortSignal;
}

export interface WrittenRecord {
  /** Position of the record in the input. */
  readonly index: number;
  readonly shardId: string;
  readonly sequenceNumber: string;
  readonly attempts: number;
}

/** The error code of a record that strict ordering did not send because an earlier record of its key was given up. */
export const UNSENT_AFTER_GIVEN_UP = "UnsentAfterGivenUp";

export interface RejectedRecord {
  readonly index: number;
  readonly record: ProducerRecord;
  /** A Kinesis or request error code, `RecordTooLarge`, or `UNSENT_AFTER_GIVEN_UP` (never sent). */
  readonly errorCode: string;
  readonly errorMessage: string;
  /** Requests that carried the record; 0 for a record that was never sent. */
  readonly attempts: number;
}

export interface PutRecordsResult {
  readonly written: readonly WrittenRecord[];
  /** Records that could not be written, by input index: never dropped silently, always named here. */
  readonly rejected: readonly RejectedRecord[];
  /** PutRecords requests sent. */
  readonly requests: number;
}

/** Some records could not be written after every attempt; they are attached, ready to retry. */
export class PutRecordsIncompleteError extends TransientError {
  readonly rejected: readonly RejectedRecord[];
  readonly written: readonly WrittenRecord[];

  constructor(result: PutRecordsResult, options?: ErrorOptions) {
    const first = result.rejected[0];
    super(
      "put-records-incomplete",
      `${result.rejected.length} of ${result.rejected.length + result.written.length} records not written` +
        (first ? ` (first: ${first.errorCode}: ${first.errorMessage})` : ""),
      options,
    );
    this.name = "PutRecordsIncompleteError";
    this.rejected = result.rejected;
    this.written = result.written;
  }
}

const utf8 = new TextEncoder();

export function recordSizeBytes(record: ProducerRecord): number {
  return record.data.byteLength + utf8.encode(record.partitionKey).byteLength;
}

/**
 * Splits pending records (by input index) into requests within the limits, keeping input order.
 * In strict mode a key's second record waits for the next round, so it cannot overtake a retry.
 */
export function planRequests(
  pending: readonly number[],
  sizeOf: (index: number) => number,
  keyOf: (index: number) => string,
  limits: PutRecordsLimits,
  ordering: OrderingMode,
): { requests: number[][]; deferred: number[] } {
  const requests: number[][] = [];
  const deferred: number[] = [];
  const keysThisRound = new Set<string>();
  let current: number[] = [];
  let currentBytes = 0;
  for (const index of pending) {
    if (ordering === OrderingMode.Strict) {
      const key = keyOf(index);
      if (keysThisRound.has(key)) {
        deferred.push(index);
        continue;
      }
      keysThisRound.add(key);
    }
    const size = sizeOf(index);
    if (current.length === limits.maxRecords || currentBytes + size > limits.maxRequestBytes) {
      requests.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(index);
    currentBytes += size;
  }
  if (current.length > 0) requests.push(current);
  return { requests, deferred };
}

/** PutRecordsOptions with every default filled in. */
interface PutSettings {
  readonly limits: PutRecordsLimits;
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly ordering: OrderingMode;
  readonly random: () => number;
  readonly sleep: Sleep;
  readonly signal?: AbortSignal;
}

function putSettings(options: PutRecordsOptions): PutSettings {
  return {
    limits: options.limits ?? PUT_RECORDS_LIMITS,
    maxAttempts: options.maxAttempts ?? 8,
    baseDelayMs: options.baseDelayMs ?? 50,
    maxDelayMs: options.maxDelayMs ?? 2_000,
    ordering: options.ordering ?? OrderingMode.Relaxed,
    random: options.random ?? Math.random,
    sleep: options.sleep ?? realSleep,
    ...(options.signal ? { signal: options.signal } : {}),
  };
}

/** What a putRecords call knows of its records across rounds, by input index. */
interface PutLedger {
  readonly records: readonly ProducerRecord[];
  readonly written: WrittenRecord[];
  readonly rejected: RejectedRecord[];
  /** Requests that carried each record. */
  readonly attempts: number[];
  /** Records whose request was refused for good: given up with the attempts they really had. */
  readonly refused: Set<number>;
  /** The last error each record met: what it is rejected with once it is given up. */
  readonly lastError: Map<number, EntryError>;
  requests: number;
}

function rejection(ledger: PutLedger, index: number, error: EntryError): RejectedRecord {
  return {
    index,
    record: ledger.records[index] as ProducerRecord,
    errorCode: error.code,
    errorMessage: error.message,
    attempts: ledger.attempts[index] as number,
  };
}

/** Splits the records into those a request can carry and those over the record limit, rejected unsent. */
function rejectOversized(
  records: readonly ProducerRecord[],
  sizes: readonly number[],
  limits: PutRecordsLimits,
): { fitting: number[]; oversized: RejectedRecord[] } {
  const fitting: number[] = [];
  const oversized: RejectedRecord[] = [];
  records.forEach((record, index) => {
    const size = sizes[index] as number;
    if (size <= limits.maxRecordBytes) fitting.push(index);
    else
      oversized.push({
        index,
        record,
        errorCode: "RecordTooLarge",
        errorMessage: `record is ${size} bytes with its partition key; the limit is ${limits.maxRecordBytes}`,
        attempts: 0,
      });
  });
  return { fitting, oversized };
}

/**
 * Strict ordering's rule: once a record of a key is given up, nothing after it of that key is sent. In
 * relaxed mode nothing is ever held back.
 */
class GivenUpKeys {
  /** The first given-up record of each key. */
  readonly #first = new Map<string, number>();
  readonly #records: readonly ProducerRecord[];
  readonly #ordering: OrderingMode;

  constructor(records: readonly ProducerRecord[], ordering: OrderingMode) {
    this.#records = records;
    this.#ordering = ordering;
  }

  giveUp(index: number): void {
    if (this.#ordering !== OrderingMode.Strict) return;
    const key = this.#keyOf(index);
    const first = this.#first.get(key);
    if (first === undefined || index < first) this.#first.set(key, index);
  }

  /** The pending records still to send, in order, and those held back unsent because of an earlier one. */
  holdBack(pending: readonly number[], ledger: PutLedger): { pending: number[]; heldBack: RejectedRecord[] } {
    const kept: number[] = [];
    const heldBack: RejectedRecord[] = [];
    for (const index of pending) {
      const key = this.#keyOf(index);
      const first = this.#first.get(key);
      if (first === undefined || index <= first) kept.push(index);
      else
        heldBack.push(
          rejection(ledger, index, {
            code: UNSENT_AFTER_GIVEN_UP,
            message: `not sent: record ${first} of partition key ${key} was not written, and strict ordering sends nothing of that key after it`,
          }),
        );
    }
    return { pending: kept, heldBack };
  }

  #keyOf(index: number): string {
    return (this.#records[index] as ProducerRecord).partitionKey;
  }
}

/** The backoff before a round that retries (none before the first): an abort ends it early, quietly. */
async function backoffBeforeRound(round: number, settings: PutSettings): Promise<void> {
  if (round === 0 || settings.baseDelayMs <= 0 || settings.maxDelayMs <= 0) return;
  try {
    await settings.sleep(
      backoffDelayMs(
        round,
        { baseMs: settings.baseDelayMs, capMs: settings.maxDelayMs, jitter: Jitter.Full },
        settings.random,
      ),
      settings.signal,
    );
  } catch (error) {
    if (!settings.signal?.aborted) throw error;
  }
}

/** Out of time: what is still pending is named, with the abort as its error, and never sent. */
function rejectAborted(pending: readonly number[], ledger: PutLedger, signal: AbortSignal): RejectedRecord[] {
  return pending.map((index) => {
    const last = ledger.lastError.get(index);
    return rejection(ledger, index, {
      code: "AbortError",
      message: `aborted (${messageOf(signal.reason)})${last ? `; last error ${last.code}: ${last.message}` : ""}`,
    });
  });
}

/** Enters one request's outcome in the ledger; returns the indices that should be tried again. */
function recordRequest(ledger: PutLedger, request: readonly number[], outcome: RequestOutcome): number[] {
  ledger.requests += 1;
  for (const i of request) ledger.attempts[i] = (ledger.attempts[i] as number) + 1;
  if (outcome.kind === "failed") {
    for (const i of request) {
      ledger.lastError.set(i, outcome.error);
      // A request that can only fail again gives its records up this round; their attempts stay the
      // requests that really carried them.
      if (!outcome.retryable) ledger.refused.add(i);
    }
    return [...request];
  }
  const failed: number[] = [];
  for (const entry of outcome.entries) {
    if (entry.written)
      ledger.written.push({
        index: entry.index,
        shardId: entry.shardId,
        sequenceNumber: entry.sequenceNumber,
        attempts: ledger.attempts[entry.index] as number,
      });
    else {
      ledger.lastError.set(entry.index, entry.error);
      failed.push(entry.index);
    }
  }
  return failed;
}

/**
 * Writes every record with PutRecords: requests within the API limits, only the failed entries
 * retried, with exponential backoff and full jitter. Returns what was written and, by input index,
 * what could not be (oversized records, entries still failing after `maxAttempts`, requests refused
 * for good); it never drops a record without naming it.
 */
export async function putRecords(
  client: KinesisClient,
  target: StreamTarget,
  records: readonly ProducerRecord[],
  options: PutRecordsOptions = {},
): Promise<PutRecordsResult> {
  const settings = putSettings(options);
  const sizes = records.map(recordSizeBytes);
  const keyOf = (i: number) => (records[i] as ProducerRecord).partitionKey;
  const ledger: PutLedger = {
    records,
    written: [],
    rejected: [],
    attempts: new Array<number>(records.length).fill(0),
    refused: new Set(),
    lastError: new Map(),
    requests: 0,
  };
  const givenUp = new GivenUpKeys(records, settings.ordering);
  const reject = (rejected: readonly RejectedRecord[]) => {
    ledger.rejected.push(...rejected);
    for (const r of rejected) givenUp.giveUp(r.index);
  };

  const { fitting, oversized } = rejectOversized(records, sizes, settings.limits);
  reject(oversized);
  let { pending, heldBack } = givenUp.holdBack(fitting, ledger);
  ledger.rejected.push(...heldBack);

  let round = 0;
  while (pending.length > 0) {
    await backoffBeforeRound(round, settings);
    if (settings.signal?.aborted) {
      ledger.rejected.push(...rejectAborted(pending, ledger, settings.signal));
      break;
    }
    const plan = planRequests(pending, (i) => sizes[i] as number, keyOf, settings.limits, settings.ordering);
    const retry: number[] = [];
    for (const request of plan.requests) {
      const outcome = await sendPutRequest(client, target, records, request, options);
      retry.push(...recordRequest(ledger, request, outcome));
    }
    const exhausted = (i: number) =>
      ledger.refused.has(i) || (ledger.attempts[i] as number) >= settings.maxAttempts;
    reject(
      retry
        .filter(exhausted)
        .map((i) =>
          rejection(ledger, i, ledger.lastError.get(i) ?? { code: "Unknown", message: "no error reported" }),
        ),
    );
    // Input order is kept for what remains, so a retried record still precedes later ones of its key.
    const remaining = new Set([...retry.filter((i) => !exhausted(i)), ...plan.deferred]);
    ({ pending, heldBack } = givenUp.holdBack(
      pending.filter((i) => remaining.has(i)),
      ledger,
    ));
    ledger.rejected.push(...heldBack);
    // A round that only drained strict-mode deferrals needs no backoff.
    round = retry.length > 0 ? round + 1 : 0;
  }

  ledger.written.sort((a, b) => a.index - b.index);
  ledger.rejected.sort((a, b) => a.index - b.index);
  return { written: ledger.written, rejected: ledger.rejected, requests: ledger.requests };
}

/** As putRecords, but throws PutRecordsIncompleteError unless every record was written. */
export async function putAllRecords(
  client: KinesisClient,
  target: StreamTarget,
  records: readonly ProducerRecord[],
  options: PutRecordsOptions = {},
): Promise<readonly WrittenRecord[]> {
  const result = await putRecords(client, target, records, options);
  if (result.rejected.length === 0) return result.written;
  // Cut off by `signal`: its reason is why (an invocation's deadline, which the caller reports as such).
  const aborted = options.signal?.aborted && result.rejected.some((r) => r.errorCode === "AbortError");
  throw new PutRecordsIncompleteError(result, aborted ? { cause: options.signal?.reason } : undefined);
}
