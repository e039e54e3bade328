import { setTimeout } from "node:timers/promises";

/**
 * Waits `ms` milliseconds, or until `signal` aborts (then it rejects with the signal's reason). Injected
 * where a test must not wait (`options.sleep`); a fake may ignore the signal.
 */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/**
 * Node's promise timer, with the argument checked: a negative or non-finite wait is a caller's bug that
 * Node would turn into a 1 ms wait without a word.
 */
export const sleep: Sleep = async (ms, signal) => {
  if (!Number.isFinite(ms) || ms < 0) {
    throw new RangeError(`sleep takes a finite number of milliseconds >= 0, got ${ms}`);
  }
  try {
    await setTimeout(ms, undefined, signal ? { signal } : {});
  } catch (error) {
    // Node rejects with its own AbortError; the signal's reason says why the wait ended.
    if (signal?.aborted) throw signal.reason;
    throw error;
  }
};
