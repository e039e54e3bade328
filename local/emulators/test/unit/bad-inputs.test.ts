import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  BAD_INPUT_CATEGORIES,
  type BadInputExpectations,
  badArguments,
  badDocuments,
  badInputTable,
  MissingBadInputCategoryError,
  NESTING_DEPTH,
  toolCallJobShape,
} from "../../src/testing/bad-inputs.js";

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

describe("badDocuments' cases", () => {
  const digest = (corpus: ReturnType<typeof badDocuments>) => {
    const hash = createHash("sha256");
    for (const category of BAD_INPUT_CATEGORIES)
      for (const input of corpus[category])
        hash.update(`${input.category}\n${input.name}\n`).update(input.value);
    return hash.digest("hex");
  };
  const labels = (corpus: ReturnType<typeof badDocuments>) =>
    BAD_INPUT_CATEGORIES.flatMap((category) => corpus[category].map((i) => `${i.category}: ${i.name}`));
  // Boundaries' tests iterate the corpus: a case dropped, renamed, reordered or rebuilt differently
  // changes what they run.
  const job = toolCallJobShape({ sessionId: "s-1", callId: "c-1" });

  it("are the same cases in the same order, byte for byte, for a job's shape", () => {
    expect(labels(badDocuments(job))).toEqual([
      "empty: no bytes",
      "empty: whitespace only",
      "empty: {}",
      "truncated: cut in the middle",
      "truncated: the last brace missing",
      "truncated: cut inside a multi-byte character",
      "oversized: exactly 262144 bytes, the limit, in tool",
      "wrong type: an array",
      "wrong type: a string",
      "wrong type: a number",
      "wrong type: null",
      "wrong type: tool a number",
      "wrong type: sessionId a string",
      'wrong version: specVersion "2.0"',
      "wrong version: specVersion 1",
      'wrong version: specVersion "v1"',
      "wrong version: specVersion null",
      "invalid UTF-8: 0xFF 0xFE in tool",
      'invalid UTF-8: an overlong "/" in tool',
      "invalid UTF-8: a lone surrogate in tool",
      "deeply nested: 10000 nested arrays",
      "deeply nested: 10000 nested objects in tool",
      "deeply nested: 10000 nested objects in a key the format does not have",
      "deeply nested: 10000 nested objects in specVersion",
      "deeply nested: 10000 nested arrays in specVersion",
      "deeply nested: 10000 nested objects in arguments",
      "hostile values: every field under __proto__",
      "hostile values: __proto__ and constructor.prototype beside the fields",
      "hostile values: __proto__ and constructor.prototype in arguments",
      "hostile values: sessionId 1e400",
      "hostile values: sessionId 2^64",
      "hostile values: sessionId -0",
      'hostile values: sessionId "NaN"',
      'hostile values: sessionId "Infinity"',
      "hostile values: tool 100,000 characters",
    ]);
    expect(digest(badDocuments(job))).toBe(
      "4d6a86333bd7f1660401fe1084dd7abb767ef2a8b0c15727f2bb03e42b5e8a33",
    );
  });

  it("are the same cases for a shape with no version, object or echoed field", () => {
    const { version: _version, ...unversioned } = shape;
    const corpus = badDocuments(unversioned);
    expect(corpus["wrong version"].map((i) => i.name)).toEqual(["a version key the format does not have"]);
    expect(labels(corpus)).toHaveLength(28);
    expect(digest(corpus)).toBe("da47e0303f90d646d5cc0c824bb17de3e373c7952abefa1f93b0be8559c82393");
  });
});
