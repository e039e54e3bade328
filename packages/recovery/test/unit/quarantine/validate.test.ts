import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { quarantineRecordSchema, validateQuarantineRecord } from "../../../src/quarantine/index.js";

/**
 * validate.ts is what the writer and reader run; schema.ts (zod) is the format's definition. Both must
 * give the same verdict, the same failing field paths and the same output for every input.
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

function outcomes(input: unknown) {
  const zod = quarantineRecordSchema.safeParse(input);
  const ours = validateQuarantineRecord(input);
  const paths = (issues: readonly { path: readonly PropertyKey[] }[]) =>
    [...new Set(issues.map((i) => i.path.map(String).join(".")))].sort();
  return {
    zod: zod.success ? { data: zod.data } : { paths: paths(zod.error.issues) },
    ours: ours.success ? { data: ours.data } : { paths: paths(ours.issues) },
  };
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
  ["failure", "timestamp"],
  ["quarantinedAt"],
  ["quarantinedBy"],
];

const oddValues: unknown[] = [
  undefined,
  null,
  "",
  "x",
  "kinesis",
  "0",
  "123",
  "1".repeat(128),
  "1".repeat(129),
  "a".repeat(256),
  "a".repeat(257),
  "12a",
  0,
  1,
  2,
  -1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  2 ** 53,
  true,
  [],
  {},
  "2026-11-30T10:00:01Z",
  "2026-11-30T10:00:01.123456Z",
  "2026-11-30T10:00Z",
  "2026-11-30T10:00:01+01:00",
  "2025-02-29T10:00:01.000Z",
  "2024-02-29T10:00:01.000Z",
  "2026-11-30 10:00:01.000Z",
];

describe("validateQuarantineRecord against the zod schema", () => {
  it("accepts a valid record and gives the same output, unknown keys dropped", () => {
    const input = { ...valid, extra: 1, source: { ...valid.source, extra: "x" } };
    const { zod, ours } = outcomes(input);
    expect(ours).toEqual(zod);
    expect(ours).toEqual({ data: valid });
  });

  it("rejects what the schema rejects, at the same fields, over every field and odd value", () => {
    let rejected = 0;
    for (const path of fields) {
      for (const value of oddValues) {
        const { zod, ours } = outcomes(withField(path, value));
        expect(ours, `${path.join(".")} = ${String(value)}`).toEqual(zod);
        if ("paths" in ours) rejected++;
      }
    }
    // The table is mostly bad input: most cases must be rejections, not agreements on acceptance.
    expect(rejected).toBeGreaterThan(fields.length * oddValues.length * 0.6);
  });

  it("rejects what is not an object at all", () => {
    for (const input of [null, undefined, "{}", 1, [], true]) {
      const { zod, ours } = outcomes(input);
      expect(ours).toEqual(zod);
      expect(ours).toEqual({ paths: [""] });
    }
  });

  it("agrees on generated records and near-misses", () => {
    const leaf = fc.oneof(
      fc.constantFrom(...oddValues),
      fc.string(),
      fc.stringMatching(/^\d{1,130}$/),
      fc.double(),
      fc.integer(),
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...fields), leaf), { maxLength: 3 }), (changes) => {
        let input: unknown = valid;
        for (const [path, value] of changes) {
          const copy = structuredClone(input) as Record<string, unknown>;
          let target: Record<string, unknown> | undefined = copy;
          for (const key of path.slice(0, -1)) {
            const next: unknown = target?.[key];
            target =
              typeof next === "object" && next !== null ? (next as Record<string, unknown>) : undefined;
          }
          if (target) target[path.at(-1) as string] = value;
          input = copy;
        }
        const { zod, ours } = outcomes(input);
        expect(ours).toEqual(zod);
      }),
      { numRuns: 2000 },
    );
  });
});
