import { setImmediate as tick } from "node:timers/promises";
import type { ItemContext } from "../src/index.js";

export type Event = {
  readonly at: number;
  readonly kind: "start" | "end";
  readonly index: number;
  readonly key: string;
};

/**
 * A deterministic clock for the engine: every started handler waits for the next `step()`, at which
 * all handlers in flight finish together. A batch then takes a countable number of steps (its
 * makespan in units of record latency), with no wall-clock timing in the tests.
 */
export class StepClock {
  now = 0;
  readonly events: Event[] = [];
  #waiting: Array<() => void> = [];
  #inFlight = 0;
  maxInFlight = 0;
  readonly maxInFlightPerKey = new Map<string, number>();
  readonly #perKey = new Map<string, number>();

  /** Wraps a handler body: records start/end, holds it until the next step. */
  handler<T>(body: (item: T, context: ItemContext) => void | Promise<void> = () => undefined) {
    return async (item: T, context: ItemContext): Promise<void> => {
      this.events.push({ at: this.now, kind: "start", index: context.index, key: context.key });
      this.#inFlight += 1;
      this.maxInFlight = Math.max(this.maxInFlight, this.#inFlight);
      const perKey = (this.#perKey.get(context.key) ?? 0) + 1;
      this.#perKey.set(context.key, perKey);
      this.maxInFlightPerKey.set(context.key, Math.max(this.maxInFlightPerKey.get(context.key) ?? 0, perKey));
      try {
        await new Promise<void>((resolve) => this.#waiting.push(resolve));
        await body(item, context);
      } finally {
        this.#inFlight -= 1;
        this.#perKey.set(context.key, (this.#perKey.get(context.key) ?? 1) - 1);
        this.events.push({ at: this.now, kind: "end", index: context.index, key: context.key });
      }
    };
  }

  /** Drives `run` to completion; returns its result and the number of steps it took. */
  async drive<R>(run: Promise<R>): Promise<{ result: R; steps: number }> {
    let done = false;
    let result: R | undefined;
    const finished = run.then((r) => {
      done = true;
      result = r;
    });
    for (;;) {
      await tick();
      if (done) break;
      const waiting = this.#waiting.splice(0);
      if (waiting.length === 0) {
        await tick();
        if (done) break;
        throw new Error("engine is neither done nor running anything: it would hang");
      }
      this.now += 1;
      for (const resolve of waiting) resolve();
    }
    await finished;
    return { result: result as R, steps: this.now };
  }

  started(): number[] {
    return this.events.filter((e) => e.kind === "start").map((e) => e.index);
  }

  startOrderOf(key: string): number[] {
    return this.events.filter((e) => e.kind === "start" && e.key === key).map((e) => e.index);
  }
}

export class Transient extends Error {
  readonly kind = "transient";
  constructor(message = "downstream throttled") {
    super(message);
    this.name = "Transient";
  }
}

export class Permanent extends Error {
  readonly kind = "permanent";
  readonly code = "test-permanent";
  constructor(message = "cannot ever succeed") {
    super(message);
    this.name = "Permanent";
  }
}
