import { describe, expect, it } from "vitest";
import { formatSpread, spreadOf } from "../../src/lib/stats.ts";

describe("spreads", () => {
  it("takes the median of an odd or even count and the range", () => {
    expect(spreadOf([3, 1, 2])).toEqual({ median: 2, min: 1, max: 3 });
    expect(spreadOf([4, 1, 2, 3])).toEqual({ median: 2.5, min: 1, max: 4 });
    expect(formatSpread(spreadOf([10.4, 12.6, 11]))).toBe("11 (10-13)");
    expect(formatSpread(spreadOf([5, 5]))).toBe("5");
  });

  it("refuses to summarise no samples", () => {
    expect(() => spreadOf([])).toThrow(/no samples/);
  });
});
