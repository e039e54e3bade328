import { describe, expect, it } from "vitest";
import { hottestKey, orderPreservingBoundMs, orderViolations } from "../../src/lib/order.ts";

describe("orderPreservingBoundMs", () => {
  it("is ceil(N / C) x L when the keys are many", () => {
    const keys = Array.from({ length: 1_000 }, (_, i) => `k${i}`);
    expect(orderPreservingBoundMs(keys, 16, 20)).toBe(63 * 20);
  });

  it("is the hottest key's records x L when one key holds more than N / C", () => {
    const keys = [...Array(100).fill("hot"), ...Array.from({ length: 100 }, (_, i) => `k${i}`)];
    expect(hottestKey(keys)).toBe(100);
    expect(orderPreservingBoundMs(keys, 16, 20)).toBe(2_000);
  });

  it("is 0 for an empty batch", () => {
    expect(orderPreservingBoundMs([], 4, 20)).toBe(0);
  });

  it.each([
    [0, 20],
    [2.5, 20],
    [4, -1],
    [4, Number.NaN],
  ])("refuses concurrency %s with latency %s", (c, l) => {
    expect(() => orderPreservingBoundMs(["a"], c, l)).toThrow(RangeError);
  });
});

describe("orderViolations", () => {
  const keys = ["a", "a", "b", "a", "b"];

  it("counts none when each key's records are applied in order, keys interleaved any way", () => {
    expect(orderViolations(keys, [2, 0, 4, 1, 3])).toBe(0);
  });

  it("counts each record applied before an earlier record of its key", () => {
    // 3 overtakes 0 and 1 (one violation), 1 overtakes 0 (one), 4 overtakes 2 (one).
    expect(orderViolations(keys, [3, 1, 0, 4, 2])).toBe(3);
  });

  it("counts a record applied while an earlier one of its key is never applied", () => {
    expect(orderViolations(keys, [1, 3, 2, 4])).toBe(2);
  });

  it("refuses an index outside the batch or applied twice", () => {
    expect(() => orderViolations(keys, [5])).toThrow(/not in the batch/);
    expect(() => orderViolations(keys, [0, 0])).toThrow(/twice/);
  });
});
