import { describe, expect, it } from "vitest";
import { validateQuarantineRecord } from "../../../src/quarantine/index.js";

/**
 * The quarantine format (v1, src/quarantine/schema.ts) judged by what it does: a valid record passes with
 * unknown keys dropped, and every field given each awkward value gives the issues listed in
 * __snapshots__/schema.test.ts.snap (path and message: what InvalidQuarantineRecordError and
 * QuarantineFormatError say). The snapshot was written when the format was declared in zod and a
 * hand-written copy was held to it, so a change of verdict, path or wording shows here.
 */

const valid = {
  formatVersion: 1,
  source: {
    kind: "kinesis",
    streamArn: "arn:aws:kinesis:us-east-1:123456789012:stream/tool-call-events",
    shardId: "shardId-000000000000",
    sequenceNumber: "49590338271490256608559692538361571095921575989130000007",
    partitionKey: "session-9",
    approximateArrivalTimestamp: 1_796_032_800.5,
  },
  data: "eyJub3QiOiJ2YWxpZA==",
  reason: { code: "schema-violation", message: "specVersion: required", details: { field: "specVersion" } },
  failure: {
    condition: "RetryAttemptsExhausted",
    approximateInvokeCount: 3,
    functionError: null,
    requestId: "r-1",
    functionArn: "arn:aws:lambda:us-east-1:123456789012:function:processor",
    timestamp: "2026-11-30T10:00:00.000Z",
  },
  quarantinedAt: "2026-11-30T10:00:01.000Z",
  quarantinedBy: "processor",
};

/** Replaces the value at `path` (undefined: deletes the key). */
function withField(path: readonly string[], value: unknown): unknown {
  const copy = structuredClone(valid) as Record<string, unknown>;
  let target = copy;
  for (const key of path.slice(0, -1)) target = target[key] as Record<string, unknown>;
  const last = path.at(-1) as string;
  if (value === undefined) delete target[last];
  else target[last] = value;
  return copy;
}

/** "accepted", or the issues as `path: message` lines, sorted. */
function verdict(input: unknown): "accepted" | string[] {
  const validation = validateQuarantineRecord(input);
  if (validation.success) return "accepted";
  return validation.issues.map((issue) => `${issue.path.map(String).join(".")}: ${issue.message}`).sort();
}

const fields: (readonly string[])[] = [
  ["formatVersion"],
  ["source"],
  ["source", "kind"],
  ["source", "streamArn"],
  ["source", "shardId"],
  ["source", "sequenceNumber"],
  ["source", "partitionKey"],
  ["source", "approximateArrivalTimestamp"],
  ["data"],
  ["reason"],
  ["reason", "code"],
  ["reason", "message"],
  ["reason", "details"],
  ["failure"],
  ["failure", "condition"],
  ["failure", "approximateInvokeCount"],
  ["failure", "functionError"],
  ["failure", "requestId"],
  ["failure", "functionArn"],
  ["failure", "timestamp"],
  ["quarantinedAt"],
  ["quarantinedBy"],
];

const oddValues: [string, unknown][] = [
  ["absent", undefined],
  ["null", null],
  ['""', ""],
  ['"x"', "x"],
  ['"kinesis"', "kinesis"],
  ['"0"', "0"],
  ['"123"', "123"],
  ["128 digits", "1".repeat(128)],
  ["129 digits", "1".repeat(129)],
  ["256 letters", "a".repeat(256)],
  ["257 letters", "a".repeat(257)],
  ['"12a"', "12a"],
  ["0", 0],
  ["1", 1],
  ["2", 2],
  ["-1", -1],
  ["1.5", 1.5],
  ["NaN", Number.NaN],
  ["Infinity", Number.POSITIVE_INFINITY],
  ["2^53", 2 ** 53],
  ["past the latest Date", 8_640_000_000_001],
  ["true", true],
  ["[]", []],
  ["{}", {}],
  ["a datetime without milliseconds", "2026-11-30T10:00:01Z"],
  ["a datetime with microseconds", "2026-11-30T10:00:01.123456Z"],
  ["a datetime without seconds", "2026-11-30T10:00Z"],
  ["a datetime with an offset", "2026-11-30T10:00:01+01:00"],
  ["29 February 2025", "2025-02-29T10:00:01.000Z"],
  ["29 February 2024", "2024-02-29T10:00:01.000Z"],
  ["a datetime with a space", "2026-11-30 10:00:01.000Z"],
];

describe("the quarantine format", () => {
  it("accepts a valid record and drops unknown keys", () => {
    const input = { ...valid, extra: 1, source: { ...valid.source, extra: "x" } };
    expect(validateQuarantineRecord(input)).toEqual({ success: true, data: valid });
  });

  it("accepts a record without the optional failure context, and null as its function error", () => {
    const { failure: _, ...withoutFailure } = valid;
    expect(verdict(withoutFailure)).toBe("accepted");
    expect(verdict(withField(["failure", "functionError"], null))).toBe("accepted");
  });

  it("refuses what is not an object at all", () => {
    for (const input of [null, undefined, "{}", 1, [], true]) {
      const validation = validateQuarantineRecord(input);
      expect(validation.success).toBe(false);
      if (!validation.success) expect(validation.issues.map((issue) => issue.path)).toEqual([[]]);
    }
  });

  it("gives each field with each awkward value the verdict and issues of the format", () => {
    const verdicts: Record<string, "accepted" | string[]> = {};
    for (const path of fields)
      for (const [label, value] of oddValues)
        verdicts[`${path.join(".")} = ${label}`] = verdict(withField(path, value));
    const rejected = Object.values(verdicts).filter((v) => v !== "accepted").length;
    // The table is mostly bad input: most cases must be refusals, not agreements on acceptance.
    expect(rejected).toBeGreaterThan(fields.length * oddValues.length * 0.6);
    expect(verdicts).toMatchSnapshot();
  });
});
