import { describe, expect, it } from "vitest";
import { clipText, PREVIEW_MAX_CHARS, previewOf } from "../../src/index.js";

const nested = (depth: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
};

describe("previewOf: what an error or a log line repeats of an input value is bounded and never throws", () => {
  it("shows small values as JSON does", () => {
    expect(previewOf("2.0")).toBe('"2.0"');
    expect(previewOf(1)).toBe("1");
    expect(previewOf(null)).toBe("null");
    expect(previewOf(undefined)).toBe("undefined");
    expect(previewOf({ a: [1, "b"], c: true })).toBe('{"a":[1,"b"],"c":true}');
  });

  it("shows a value nested 100,000 levels deep without a RangeError, three levels of it", () => {
    // JSON.stringify throws "Maximum call stack size exceeded" on this (issue 24).
    expect(() => JSON.stringify(nested(100_000))).toThrow(RangeError);
    expect(previewOf(nested(100_000))).toBe('{"a":{"a":{"a":{…}}}}');
  });

  it("cuts long text, many keys and long arrays at the bound, marking the cut", () => {
    const long = previewOf("x".repeat(10_000_000));
    expect(long).toHaveLength(PREVIEW_MAX_CHARS + 1);
    expect(long.endsWith("…")).toBe(true);
    const wide = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i]));
    expect(previewOf(wide).length).toBeLessThanOrEqual(PREVIEW_MAX_CHARS + 1);
    expect(
      previewOf(
        Array.from({ length: 1_000_000 }, () => 0),
        20,
      ),
    ).toBe("[0,0,0,0,0,0,0,0,0,0…");
  });

  it("survives what JSON cannot show: cycles, bigints, symbols, functions, throwing getters", () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(previewOf(cycle)).toBe('{"self":{"self":{"self":{…}}}}');
    expect(previewOf(10n)).toBe("10");
    expect(previewOf([Symbol("s"), () => 1])).toBe("[a symbol,a function]");
    const hostile = {
      ok: 1,
      get bad(): never {
        throw new Error("no");
      },
    };
    expect(previewOf(hostile)).toBe('{"ok":1,"bad":…');
  });

  it("clipText cuts text that is already text (a path, a key) the same way", () => {
    expect(clipText("short")).toBe("short");
    expect(clipText("y".repeat(500), 10)).toBe(`${"y".repeat(10)}…`);
  });
});
