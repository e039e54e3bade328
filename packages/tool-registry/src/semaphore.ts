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

  async acquire(): Promise<() => void> {
    if (this.#active < this.#limit) {
      this.#active += 1;
    } else {
      // The releasing holder hands its slot straight to the next waiter, so #active stays put.
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
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
