import { seededRandom } from "@mcp-pipeline/retry";
import { describe, expect, it } from "vitest";
import { spreadKeys, zipfKeys } from "../../src/lib/keys.ts";
import { keyCounts } from "../../src/lib/order.ts";

describe("spreadKeys", () => {
  it("spreads n records evenly over the keys", () => {
    const counts = keyCounts(spreadKeys(1_000, 10));
    expect(counts.size).toBe(10);
    expect(new Set(counts.values())).toEqual(new Set([100]));
  });

  it("gives every record its own key when there are as many keys as records", () => {
    expect(new Set(spreadKeys(1_000, 1_000)).size).toBe(1_000);
  });

  it.each([
    [10, 0],
    [10, 1.5],
    [-1, 3],
    [Number.NaN, 3],
  ])("refuses %s records over %s keys", (n, k) => {
    expect(() => spreadKeys(n, k)).toThrow(RangeError);
  });
});

describe("zipfKeys", () => {
  it("is the same batch for the same seed", () => {
    expect(zipfKeys(500, 100, 1, seededRandom(7))).toEqual(zipfKeys(500, 100, 1, seededRandom(7)));
  });

  it("gives the key of rank r a share near (1 / r) / H(K)", () => {
    const n = 50_000;
    const counts = keyCounts(zipfKeys(n, 100, 1, seededRandom(42)));
    const harmonic = Array.from({ length: 100 }, (_, i) => 1 / (i + 1)).reduce((a, b) => a + b, 0);
    for (const rank of [1, 2, 10]) {
      const expected = n / rank / harmonic;
      const actual = counts.get(`z${rank}`) ?? 0;
      // Five standard deviations of a binomial count: a wrong law misses by far more.
      expect(Math.abs(actual - expected)).toBeLessThan(5 * Math.sqrt(expected));
    }
    expect([...counts.keys()].every((k) => /^z([1-9]\d?|100)$/.test(k))).toBe(true);
  });

  it("draws keys uniformly with exponent 0, and the first key only with one key", () => {
    const counts = keyCounts(zipfKeys(20_000, 4, 0, seededRandom(1)));
    for (const count of counts.values()) expect(Math.abs(count - 5_000)).toBeLessThan(5 * Math.sqrt(5_000));
    expect(new Set(zipfKeys(100, 1, 1, seededRandom(1)))).toEqual(new Set(["z1"]));
  });

  it("uses every rank up to the last, even with a random source at its bounds", () => {
    expect(
      zipfKeys(
        2,
        5,
        1,
        (() => {
          const values = [0, 0.999_999_999];
          return () => values.shift() ?? 0;
        })(),
      ),
    ).toEqual(["z1", "z5"]);
  });

  it.each([
    [-1, "exponent"],
    [Number.POSITIVE_INFINITY, "exponent"],
    [Number.NaN, "exponent"],
  ])("refuses exponent %s", (exponent) => {
    expect(() => zipfKeys(10, 10, exponent, seededRandom(1))).toThrow(/Zipf exponent/);
  });

  it("refuses a number of keys below one", () => {
    expect(() => zipfKeys(10, 0, 1, seededRandom(1))).toThrow(/number of keys/);
  });
});
