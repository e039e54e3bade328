import { describe, expect, it } from "vitest";
import {
  BAD_INPUT_CATEGORIES,
  type BadInputExpectations,
  badArguments,
  badDocuments,
  badInputTable,
  MissingBadInputCategoryError,
  NESTING_DEPTH,
} from "../../src/bad-inputs.js";

const shape = {
  valid: { version: "1.0", name: "n", count: 1, inner: { value: 2 } },
  maxBytes: 4_096,
  stringField: "name",
  numberField: "inner.value",
  version: { field: "version", unsupported: ["2.0"] },
} as const;

const noop = Object.fromEntries(
  BAD_INPUT_CATEGORIES.map((c) => [c, () => undefined]),
) as unknown as BadInputExpectations<Uint8Array>;

describe("the bad-input corpus", () => {
  it("has cases in every category, for documents and for command lines", () => {
    const documents = badDocuments(shape);
    const argv = badArguments("seed");
    for (const category of BAD_INPUT_CATEGORIES) {
      expect(documents[category].length, category).toBeGreaterThan(0);
      expect(argv[category].length, category).toBeGreaterThan(0);
    }
  });

  it("builds what each case says: the limit exactly, invalid UTF-8, the nesting depth, raw numbers", () => {
    const documents = badDocuments(shape);
    const decode = (bytes: Uint8Array) => new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    expect(documents.oversized[0]?.value.length).toBe(4_096);
    expect(JSON.parse(decode(documents.oversized[0]?.value ?? new Uint8Array()))).toMatchObject({
      count: 1,
    });
    for (const input of documents["invalid UTF-8"]) {
      expect(() => decode(input.value), input.name).toThrow(TypeError);
      // The bad bytes sit inside the string field: read leniently, the document is still JSON.
      expect(JSON.parse(new TextDecoder().decode(input.value)).name, input.name).toMatch(/^a\uFFFD+b$/);
    }
    const nested = documents["deeply nested"].map((i) => decode(i.value));
    expect(nested[0]?.startsWith("[".repeat(NESTING_DEPTH))).toBe(true);
    expect(nested[1]?.match(/\{"a":/g)).toHaveLength(NESTING_DEPTH);
    const hostile = Object.fromEntries(documents["hostile values"].map((i) => [i.name, decode(i.value)]));
    expect(hostile["inner.value 1e400"]).toContain('"value":1e400');
    expect(hostile["inner.value -0"]).toContain('"value":-0');
    expect(JSON.parse(hostile["every field under __proto__"] ?? "")).not.toHaveProperty("version");
    expect(documents["wrong version"].map((i) => decode(i.value))).toEqual([
      JSON.stringify({ ...shape.valid, version: "2.0" }),
    ]);
  });

  it("fails a boundary's table that leaves a category out, naming the category", () => {
    const { "deeply nested": _skipped, ...partial } = noop;
    expect(() => badInputTable(badDocuments(shape), partial as BadInputExpectations<Uint8Array>)).toThrow(
      new MissingBadInputCategoryError("deeply nested", "the boundary's test has no expectation"),
    );
    expect(() => badInputTable({ ...badDocuments(shape), empty: [] }, noop)).toThrow(
      /"empty": the corpus has no case/,
    );
    expect(badInputTable(badDocuments(shape), noop).map((r) => r.label)).toContain(
      "hostile values: inner.value -0",
    );
  });
});
