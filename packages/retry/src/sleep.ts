import { setTimeout } from "node:timers/promises";

/** Waits `ms` milliseconds. Injected where a test must not wait (`options.sleep`). */
export type Sleep = (ms: number) => Promise<void>;

/**
 * Node's promise timer, with the argument checked: a negative or non-finite wait is a caller's bug that
 * Node would turn into a 1 ms wait without a word.
 */
export const sleep: Sleep = (ms) => {
  if (!Number.isFinite(ms) || ms < 0) {
    return Promise.reject(new RangeError(`sleep takes a finite number of milliseconds >= 0, got ${ms}`));
  }
  return setTimeout(ms);
};
