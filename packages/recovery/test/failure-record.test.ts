import { type DecodeResult, SchemaViolationError } from "@mcp-pipeline/contracts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeFailureRecord, kinesisFailureRecordSchema } from "../src/index.js";

/**
 * decodeFailureRecord runs hand-written rules, not the zod schema, for dlq-redrive's load time
 * (docs/benchmarks/cold-start.md). The schema stays the definition: every bad case below and generated
 * near-misses must get the same verdict, error class, field paths and messages, and on success the same
 * value (unknown fields dropped).
 */

/** What decodeFailureRecord did with the zod schema: the reference. */
function zodDecode(value: unknown) {
  const parsed = kinesisFailureRecordSchema.safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = parsed.error.issues.map((i) => `${i.path.map(String).join(".") || "(root)"}: ${i.message}`);
  return { ok: false, error: "SchemaViolationError", issues: issues.sort() };
}

function outcome(result: DecodeResult<unknown>) {
  if (result.ok) return { ok: true, value: result.value };
  expect(result.error).toBeInstanceOf(SchemaViolationError);
  const issues = (result.error as SchemaViolationError).issues.map((i) => `${i.path}: ${i.message}`);
  return { ok: false, error: result.error.name, issues: issues.sort() };
}

function expectSame(value: unknown): void {
  const text = JSON.stringify(value);
  expect(outcome(decodeFailureRecord(text))).toEqual(zodDecode(JSON.parse(text)));
}

/** docs/aws-semantics.md §1.6: the on-failure record Lambda's Kinesis ESM sends. */
const record = {
  requestContext: {
    requestId: "c9b8fa9f-5a7f-4b2a-af9c-0c604cde93a5",
    functionArn: "arn:aws:lambda:us-east-1:000000000000:function:processor",
    condition: "RetryAttemptsExhausted",
    approximateInvokeCount: 4,
  },
  responseContext: { statusCode: 200, executedVersion: "$LATEST", functionError: "Unhandled" },
  version: "1.0",
  timestamp: "2026-11-30T10:00:00.000Z",
  KinesisBatchInfo: {
    shardId: "shardId-000000000000",
    startSequenceNumber: "49590338271490256608559692538361571095921575989136588898",
    endSequenceNumber: "49590338271490256608559692540925702759324208523137515618",
    approximateArrivalOfFirstRecord: "2026-11-30T09:59:00.000Z",
    approximateArrivalOfLastRecord: "2026-11-30T09:59:01Z",
    batchSize: 500,
    streamArn: "arn:aws:kinesis:us-east-1:123456789012:stream/events",
  },
};
const info = record.KinesisBatchInfo;

const cases: [string, unknown][] = [
  ["a failure record", record],
  ["a record age exceeded (no responseContext)", { ...record, responseContext: undefined }],
  [
    "a null functionError",
    { ...record, responseContext: { ...record.responseContext, functionError: null } },
  ],
  ["extra fields", { ...record, extra: 1, KinesisBatchInfo: { ...info, extra: true } }],
  ["a JSON array", [record]],
  ["null", null],
  ["a string", "record"],
  ["an SQS message of another kind", { Records: [] }],
  ["no KinesisBatchInfo", { ...record, KinesisBatchInfo: undefined }],
  ["no requestContext", { ...record, requestContext: undefined }],
  ["an empty condition", { ...record, requestContext: { ...record.requestContext, condition: "" } }],
  [
    "a negative invoke count",
    { ...record, requestContext: { ...record.requestContext, approximateInvokeCount: -1 } },
  ],
  ["a fractional status", { ...record, responseContext: { ...record.responseContext, statusCode: 200.5 } }],
  [
    "a numeric functionError",
    { ...record, responseContext: { ...record.responseContext, functionError: 1 } },
  ],
  ["a timestamp with an offset", { ...record, timestamp: "2026-11-30T10:00:00+01:00" }],
  [
    "a sequence number with letters",
    { ...record, KinesisBatchInfo: { ...info, startSequenceNumber: "49x" } },
  ],
  ["a numeric sequence number", { ...record, KinesisBatchInfo: { ...info, endSequenceNumber: 4959 } }],
  [
    "a sequence number of 129 digits",
    { ...record, KinesisBatchInfo: { ...info, startSequenceNumber: "1".repeat(129) } },
  ],
  ["an empty shard id", { ...record, KinesisBatchInfo: { ...info, shardId: "" } }],
  ["batch size 0", { ...record, KinesisBatchInfo: { ...info, batchSize: 0 } }],
  [
    "a queue ARN for a stream ARN",
    { ...record, KinesisBatchInfo: { ...info, streamArn: "arn:aws:sqs:us-east-1:123456789012:q" } },
  ],
  [
    "a stream ARN in a partition",
    {
      ...record,
      KinesisBatchInfo: { ...info, streamArn: "arn:aws-cn:kinesis:cn-north-1:123456789012:stream/e" },
    },
  ],
  [
    "several bad fields at once",
    { ...record, version: 1, KinesisBatchInfo: { ...info, batchSize: "500", shardId: 7 } },
  ],
];

describe("decodeFailureRecord decides as kinesisFailureRecordSchema does", () => {
  it.each(cases)("%s", (_label, value) => expectSame(value));

  it("agrees on generated near-misses", () => {
    const tricky = fc.oneof(
      fc.jsonValue({ maxDepth: 1 }),
      fc.constantFrom(
        "",
        "1",
        "x".repeat(129),
        "2026-11-30T10:00:00Z",
        "2026-02-30T10:00:00Z",
        info.streamArn,
      ),
      fc.constantFrom(-1, 0, 1, 1.5, 2 ** 60, null),
      fc.constant(undefined),
    );
    const paths = [
      ["requestContext"],
      ["requestContext", "requestId"],
      ["requestContext", "condition"],
      ["requestContext", "approximateInvokeCount"],
      ["responseContext"],
      ["responseContext", "statusCode"],
      ["responseContext", "functionError"],
      ["version"],
      ["timestamp"],
      ["KinesisBatchInfo"],
      ["KinesisBatchInfo", "shardId"],
      ["KinesisBatchInfo", "startSequenceNumber"],
      ["KinesisBatchInfo", "approximateArrivalOfLastRecord"],
      ["KinesisBatchInfo", "batchSize"],
      ["KinesisBatchInfo", "streamArn"],
    ];
    const mutate = (path: readonly string[], v: unknown): unknown => {
      const copy = structuredClone(record) as Record<string, unknown>;
      let at: Record<string, unknown> = copy;
      for (const key of path.slice(0, -1)) {
        const next = at[key];
        if (typeof next !== "object" || next === null) return copy;
        at = next as Record<string, unknown>;
      }
      at[path.at(-1) as string] = v;
      return copy;
    };
    fc.assert(
      fc.property(fc.constantFrom(...paths), tricky, (path, v) => expectSame(mutate(path, v))),
      { numRuns: 2_000 },
    );
  });
});

describe("decodeFailureRecord's error names no part of a body that is not JSON", () => {
  it.each(['{"token": s3cr3t}', "s3cr3t", '["s3cr3t",]'])("%j", (text) => {
    const decoded = decodeFailureRecord(text);
    expect(decoded).toMatchObject({ ok: false, error: { code: "bad-json" } });
    if (!decoded.ok) {
      expect(decoded.error.message).not.toContain("s3cr3t");
      expect(decoded.error.cause).toBeUndefined();
    }
  });
});
