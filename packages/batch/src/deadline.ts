/**
 * When to stop starting work. Lambda kills an invocation at its timeout and then retries the whole
 * batch (docs/aws-semantics.md §1.3 "During invocation"; §1.4: a timeout is a function error), so it is
 * better to stop starting records while there is still time to finish the ones in flight and report
 * the rest as failed: the next invocation begins exactly there.
 */
export interface Deadline {
  /** True once nothing new should start. */
  readonly reached: () => boolean;
  /**
   * Milliseconds until `reached()` turns true, when known. With it the engine can tell whether the rest
   * of the batch still fits, and once it does not, starts records in shard order so the checkpoint
   * moves (schedule.ts).
   */
  readonly timeLeftMs?: () => number;
  /** Latency assumed for one record before any has finished, ms (the engine then uses the slowest seen). */
  readonly expectedRecordMs?: number;
  /** The clock record latencies are measured with, ms; `performance.now` by default. */
  readonly nowMs?: () => number;
}

export const NO_DEADLINE: Deadline = { reached: () => false };

/** Anything with Lambda's `getRemainingTimeInMillis`, including the local runtime's context. */
export interface RemainingTime {
  getRemainingTimeInMillis(): number;
}

/**
 * Nothing new starts once less than `marginMs` of the invocation remains. Choose the margin as the
 * slowest expected record latency plus the time to write the response, so that what is in flight
 * when the deadline is reached can still finish. The margin is therefore also the engine's latency
 * estimate until the first record has finished.
 */
export function deadlineFromContext(context: RemainingTime, marginMs: number): Deadline {
  if (!Number.isFinite(marginMs) || marginMs < 0) {
    throw new RangeError(`deadline margin must be a finite number of milliseconds >= 0, got ${marginMs}`);
  }
  return {
    reached: () => context.getRemainingTimeInMillis() < marginMs,
    timeLeftMs: () => context.getRemainingTimeInMillis() - marginMs,
    expectedRecordMs: marginMs,
  };
}
