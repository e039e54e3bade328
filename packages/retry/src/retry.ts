import { sleep as realSleep, type Sleep } from "./sleep.js";

export interface RetryOptions {
  /** Calls at most, the first included: a whole number >= 1, or Infinity (until not retryable). */
  readonly maxAttempts: number;
  /** The wait before retry number `retry` (1 for the first), e.g. `(r) => backoffDelayMs(r, …)`. */
  readonly delayMs: (retry: number) => number;
  /** Whether the error of attempt `attempt` is worth another call; default: every error. */
  readonly retryable?: (error: unknown, attempt: number) => boolean;
  readonly sleep?: Sleep;
}

/**
 * Calls `operation` until it resolves, an error is not retryable, or `maxAttempts` calls have failed;
 * then rethrows that call's error as it is, so callers still match on its name. No wait follows the
 * last call.
 */
export async function retry<T>(
  operation: (attempt: number) => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const { maxAttempts } = options;
  if (!(maxAttempts === Number.POSITIVE_INFINITY || (Number.isInteger(maxAttempts) && maxAttempts >= 1))) {
    throw new RangeError(`retry: maxAttempts must be a whole number >= 1 or Infinity, got ${maxAttempts}`);
  }
  const wait = options.sleep ?? realSleep;
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation(attempt);
    } catch (error) {
      if (attempt >= maxAttempts || !(options.retryable?.(error, attempt) ?? true)) throw error;
      await wait(options.delayMs(attempt));
    }
  }
}
