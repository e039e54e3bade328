/** A counting semaphore with FIFO waiters: caps how many runs of one tool are in flight. */
export class Semaphore {
  readonly #limit: number;
  #active = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(limit: number) {
    this.#limit = limit;
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Resolves with the function that gives the slot back. A waiter whose `signal` aborts leaves the
   * queue and rejects with the signal's reason; it never holds a slot.
   */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#active < this.#limit) {
      this.#active += 1;
    } else {
      // The releasing holder hands its slot straight to the next waiter, so #active stays put.
      await new Promise<void>((resolve, reject) => {
        const waiter = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        const onAbort = () => {
          const at = this.#waiting.indexOf(waiter);
          if (at >= 0) this.#waiting.splice(at, 1);
          reject(signal?.reason);
        };
        this.#waiting.push(waiter);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#active -= 1;
    };
  }
}
