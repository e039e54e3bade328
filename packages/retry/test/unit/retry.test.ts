import { describe, expect, it } from "vitest";
import { retry, sleep } from "../../src/index.js";

class Throttled extends Error {
  override name = "Throttled";
}

/** An operation that fails with the given errors in turn, then answers "done". */
function failing(...errors: Error[]) {
  const calls: number[] = [];
  const operation = async (attempt: number) => {
    calls.push(attempt);
    const error = errors[calls.length - 1];
    if (error) throw error;
    return "done";
  };
  return { calls, operation };
}

describe("retry", () => {
  it("calls again after each retryable failure, waiting delayMs(retry) between calls", async () => {
    const { calls, operation } = failing(new Throttled(), new Throttled());
    const waits: number[] = [];
    const result = await retry(operation, {
      maxAttempts: 5,
      delayMs: (r) => r * 10,
      sleep: async (ms) => void waits.push(ms),
    });
    expect(result).toBe("done");
    expect(calls).toEqual([1, 2, 3]);
    expect(waits).toEqual([10, 20]);
  });

  it("after maxAttempts failed calls, rethrows the last error as it is, with no wait after it", async () => {
    const last = new Throttled("third");
    const { calls, operation } = failing(new Throttled("first"), new Throttled("second"), last);
    const waits: number[] = [];
    const attempt = retry(operation, {
      maxAttempts: 3,
      delayMs: () => 1,
      sleep: async (ms) => void waits.push(ms),
    });
    await expect(attempt).rejects.toBe(last);
    expect(calls).toEqual([1, 2, 3]);
    expect(waits).toEqual([1, 1]);
  });

  it("an error that is not retryable ends it at once", async () => {
    const fatal = new Error("AccessDenied");
    const { calls, operation } = failing(new Throttled(), fatal);
    const seen: [string, number][] = [];
    const attempt = retry(operation, {
      maxAttempts: 10,
      delayMs: () => 0,
      retryable: (error, n) => {
        seen.push([(error as Error).name, n]);
        return error instanceof Throttled;
      },
      sleep: async () => undefined,
    });
    await expect(attempt).rejects.toBe(fatal);
    expect(calls).toEqual([1, 2]);
    expect(seen).toEqual([
      ["Throttled", 1],
      ["Error", 2],
    ]);
  });

  it("maxAttempts Infinity retries until the error is not retryable", async () => {
    const errors = Array.from({ length: 20 }, () => new Throttled());
    const { calls, operation } = failing(...errors);
    expect(
      await retry(operation, {
        maxAttempts: Number.POSITIVE_INFINITY,
        delayMs: () => 0,
        sleep: async () => undefined,
      }),
    ).toBe("done");
    expect(calls).toHaveLength(21);
  });

  it.each([0, -1, 2.5, Number.NaN])(
    "refuses maxAttempts %s with a RangeError, calling nothing",
    async (maxAttempts) => {
      const { calls, operation } = failing();
      await expect(retry(operation, { maxAttempts, delayMs: () => 0 })).rejects.toThrow(
        new RangeError(`retry: maxAttempts must be a whole number >= 1 or Infinity, got ${maxAttempts}`),
      );
      expect(calls).toEqual([]);
    },
  );
});

describe("sleep", () => {
  it("resolves after the timer, with nothing", async () => {
    await expect(sleep(1)).resolves.toBeUndefined();
    await expect(sleep(0)).resolves.toBeUndefined();
  });

  it("ends when its signal aborts, with the signal's reason", async () => {
    const controller = new AbortController();
    const reason = new Error("the invocation's deadline");
    // An hour: only the abort can end it.
    const waiting = sleep(3_600_000, controller.signal);
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    await expect(sleep(3_600_000, controller.signal)).rejects.toBe(reason);
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])("refuses %s ms with a RangeError", async (ms) => {
    await expect(sleep(ms)).rejects.toThrow(
      new RangeError(`sleep takes a finite number of milliseconds >= 0, got ${ms}`),
    );
  });
});
