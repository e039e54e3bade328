import {
  type KinesisClient,
  PutRecordsCommand,
  type PutRecordsCommandOutput,
  type PutRecordsRequestEntry,
} from "@aws-sdk/client-kinesis";
import { messageOf, TransientError } from "@mcp-pipeline/contracts";
import { backoffDelayMs, Jitter, sleep as realSleep, type Sleep } from "@mcp-pipeline/retry";
import { sendOptions } from "./request-options.js";

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

export interface ProducerRecord {
  readonly data: Uint8Array;
  readonly partitionKey: string;
  readonly explicitHashKey?: string;
}

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

export type StreamTarget = { readonly streamName: string } | { readonly streamArn: string };

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

/** Errors after which the same request can only fail again. */
function isRetryableRequestError(error: unknown): boolean {
  const name = (error as { name?: unknown }).name;
  if (name === "ProvisionedThroughputExceededException" || name === "KMSThrottlingException") return true;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status === undefined || status >= 500 || status === 429;
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
  const limits = options.limits ?? PUT_RECORDS_LIMITS;
  const maxAttempts = options.maxAttempts ?? 8;
  const baseDelayMs = options.baseDelayMs ?? 50;
  const maxDelayMs = options.maxDelayMs ?? 2_000;
  const ordering = options.ordering ?? OrderingMode.Relaxed;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? realSleep;

  const written: WrittenRecord[] = [];
  const rejected: RejectedRecord[] = [];
  const attempts = new Array<number>(records.length).fill(0);
  const lastError = new Map<number, { code: string; message: string }>();
  const sizes = records.map(recordSizeBytes);
  let requestCount = 0;

  const keyOf = (i: number) => (records[i] as ProducerRecord).partitionKey;
  // Strict mode: the first given-up record of each key; nothing of that key after it is sent.
  const givenUp = new Map<string, number>();
  const giveUp = (index: number) => {
    if (ordering !== OrderingMode.Strict) return;
    const key = keyOf(index);
    const first = givenUp.get(key);
    if (first === undefined || index < first) givenUp.set(key, index);
  };
  const isBlocked = (index: number) => {
    const first = givenUp.get(keyOf(index));
    return first !== undefined && index > first;
  };
  const holdBack = (index: number) => {
    const first = givenUp.get(keyOf(index)) as number;
    rejected.push({
      index,
      record: records[index] as ProducerRecord,
      errorCode: UNSENT_AFTER_GIVEN_UP,
      errorMessage: `not sent: record ${first} of partition key ${keyOf(index)} was not written, and strict ordering sends nothing of that key after it`,
      attempts: attempts[index] as number,
    });
  };

  let pending: number[] = [];
  records.forEach((record, index) => {
    const size = sizes[index] as number;
    if (size > limits.maxRecordBytes) {
      rejected.push({
        index,
        record,
        errorCode: "RecordTooLarge",
        errorMessage: `record is ${size} bytes with its partition key; the limit is ${limits.maxRecordBytes}`,
        attempts: 0,
      });
      giveUp(index);
    } else {
      pending.push(index);
    }
  });
  pending = pending.filter((i) => {
    if (!isBlocked(i)) return true;
    holdBack(i);
    return false;
  });

  let round = 0;
  while (pending.length > 0) {
    if (round > 0 && baseDelayMs > 0 && maxDelayMs > 0) {
      try {
        await sleep(
          backoffDelayMs(round, { baseMs: baseDelayMs, capMs: maxDelayMs, jitter: Jitter.Full }, random),
          options.signal,
        );
      } catch (error) {
        if (!options.signal?.aborted) throw error;
      }
    }
    if (options.signal?.aborted) {
      // Out of time: what is still pending is named, with the abort as its error, and never sent.
      for (const index of pending) {
        const last = lastError.get(index);
        rejected.push({
          index,
          record: records[index] as ProducerRecord,
          errorCode: "AbortError",
          errorMessage: `aborted (${messageOf(options.signal.reason)})${last ? `; last error ${last.code}: ${last.message}` : ""}`,
          attempts: attempts[index] as number,
        });
      }
      break;
    }
    const plan = planRequests(pending, (i) => sizes[i] as number, keyOf, limits, ordering);
    const retry: number[] = [];
    let anyFailed = false;
    for (const request of plan.requests) {
      const failed = await sendOnce(request);
      if (failed.length > 0) anyFailed = true;
      retry.push(...failed);
    }
    const exhausted = retry.filter((i) => (attempts[i] as number) >= maxAttempts);
    for (const index of exhausted) {
      const error = lastError.get(index) ?? { code: "Unknown", message: "no error reported" };
      rejected.push({
        index,
        record: records[index] as ProducerRecord,
        errorCode: error.code,
        errorMessage: error.message,
        attempts: attempts[index] as number,
      });
      giveUp(index);
    }
    // Input order is kept for what remains, so a retried record still precedes later ones of its key.
    const remaining = new Set([
      ...retry.filter((i) => (attempts[i] as number) < maxAttempts),
      ...plan.deferred,
    ]);
    pending = pending.filter((i) => {
      if (!remaining.has(i)) return false;
      if (!isBlocked(i)) return true;
      holdBack(i);
      return false;
    });
    // A round that only drained strict-mode deferrals needs no backoff.
    round = anyFailed ? round + 1 : 0;
  }

  written.sort((a, b) => a.index - b.index);
  rejected.sort((a, b) => a.index - b.index);
  return { written, rejected, requests: requestCount };

  /** Sends one request; returns the indices that should be tried again. */
  async function sendOnce(request: readonly number[]): Promise<number[]> {
    const entries: PutRecordsRequestEntry[] = request.map((i) => {
      const record = records[i] as ProducerRecord;
      return {
        Data: record.data,
        PartitionKey: record.partitionKey,
        ...(record.explicitHashKey !== undefined ? { ExplicitHashKey: record.explicitHashKey } : {}),
      };
    });
    for (const i of request) attempts[i] = (attempts[i] as number) + 1;
    requestCount += 1;
    let response: PutRecordsCommandOutput;
    try {
      response = await client.send(
        new PutRecordsCommand({
          Records: entries,
          ...("streamArn" in target ? { StreamARN: target.streamArn } : { StreamName: target.streamName }),
        }),
        sendOptions(options),
      );
    } catch (error) {
      const code = (error as { name?: string }).name ?? "Error";
      for (const i of request) {
        lastError.set(i, { code, message: messageOf(error) });
        if (!isRetryableRequestError(error)) attempts[i] = maxAttempts;
      }
      return [...request];
    }
    const results = response.Records ?? [];
    const failed: number[] = [];
    request.forEach((index, position) => {
      const entry = results[position];
      if (entry?.SequenceNumber && entry.ShardId && !entry.ErrorCode) {
        written.push({
          index,
          shardId: entry.ShardId,
          sequenceNumber: entry.SequenceNumber,
          attempts: attempts[index] as number,
        });
      } else {
        lastError.set(index, {
          code: entry?.ErrorCode ?? "MissingResult",
          message: entry?.ErrorMessage ?? "no result for this entry in the response",
        });
        failed.push(index);
      }
    });
    return failed;
  }
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
