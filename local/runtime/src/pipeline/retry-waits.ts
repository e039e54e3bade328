/**
 * The local mappings' own retry waits at the local stack's time scale. How long Lambda waits before it
 * retries a failed batch or read is not documented (docs/aws-semantics.md §9.3): the waits are the local
 * runtime's choice, and a choice made in AWS time. Left unscaled they cost `timeScale` times their share of
 * a function's (scaled) time, so the pipeline divides them like every other duration it declares.
 */
import { backoffDelayMs } from "@mcp-pipeline/retry";
import { BATCH_BACKOFF, READ_BACKOFF } from "../esm/kinesis/poller.js";

export interface ScaledRetryWaits {
  /** Before a failed batch is invoked again (the poller's `retryDelayMs`). */
  readonly retryDelayMs: (attempt: number) => number;
  /** Before a failed GetShardIterator or GetRecords is tried again (the poller's `readRetryDelayMs`). */
  readonly readRetryDelayMs: (attempt: number) => number;
}

/**
 * The poller's own backoffs (same base doubling to the same cap), each wait divided by `timeScale` and at
 * least 1 ms, as pipeline.ts scales every duration.
 */
export function scaledRetryWaits(timeScale: number): ScaledRetryWaits {
  if (!(Number.isFinite(timeScale) && timeScale > 0)) {
    throw new RangeError(`scaledRetryWaits: the time scale must be a number > 0, got ${timeScale}`);
  }
  const scaled = (ms: number) => Math.max(1, Math.round(ms / timeScale));
  return {
    retryDelayMs: (attempt) => scaled(backoffDelayMs(attempt, BATCH_BACKOFF)),
    readRetryDelayMs: (attempt) => scaled(backoffDelayMs(attempt, READ_BACKOFF)),
  };
}
