import { describe, expect, it } from "vitest";
import { backoffDelayMs, Jitter } from "../../src/index.js";

describe("backoffDelayMs", () => {
  it("doubles the ceiling from baseMs with every retry, up to capMs", () => {
    const delays = [1, 2, 3, 4, 5, 6].map((r) => backoffDelayMs(r, { baseMs: 100, capMs: 2_000 }));
    expect(delays).toEqual([100, 200, 400, 800, 1_600, 2_000]);
  });

  it("full jitter: a whole number of milliseconds from 0 up to the ceiling", () => {
    const backoff = { baseMs: 100, capMs: 5_000, jitter: Jitter.Full };
    expect(backoffDelayMs(3, backoff, () => 0)).toBe(0);
    expect(backoffDelayMs(3, backoff, () => 0.5)).toBe(200);
    expect(backoffDelayMs(3, backoff, () => 0.99999)).toBe(399);
  });

  it("equal jitter: at least half the ceiling, below the whole", () => {
    const backoff = { baseMs: 200, capMs: 5_000, jitter: Jitter.Equal };
    expect(backoffDelayMs(2, backoff, () => 0)).toBe(200);
    expect(backoffDelayMs(2, backoff, () => 0.5)).toBe(300);
    expect(backoffDelayMs(10, backoff, () => 0)).toBe(2_500);
  });

  it("a zero base or cap waits nothing", () => {
    expect(backoffDelayMs(4, { baseMs: 0, capMs: 1_000, jitter: Jitter.Full }, () => 0.7)).toBe(0);
    expect(backoffDelayMs(4, { baseMs: 50, capMs: 0 })).toBe(0);
  });

  it.each([
    [0, { baseMs: 100, capMs: 1_000 }, /retry counts from 1, got 0/],
    [1.5, { baseMs: 100, capMs: 1_000 }, /retry counts from 1, got 1.5/],
    [1, { baseMs: -1, capMs: 1_000 }, /baseMs must be a number >= 0, got -1/],
    [1, { baseMs: 100, capMs: Number.NaN }, /capMs must be a number >= 0, got NaN/],
    [1, { baseMs: Number.POSITIVE_INFINITY, capMs: Number.POSITIVE_INFINITY }, /must be finite/],
    [1, { baseMs: 100, capMs: 1_000, jitter: "half" as Jitter }, /unknown jitter "half"/],
  ])("refuses retry %j with %j: a RangeError that names the input", (retry, backoff, message) => {
    expect(() => backoffDelayMs(retry, backoff)).toThrow(RangeError);
    expect(() => backoffDelayMs(retry, backoff)).toThrow(message);
  });
});
