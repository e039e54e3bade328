import { type DecodeResult, SchemaViolationError } from "@mcp-pipeline/contracts";
import { describe, expect, it } from "vitest";
import { decodeFailureRecord } from "../../src/index.js";

/**
 * What decodeFailureRecord makes of each case: the verdict, and the error's class and issues (path and
 * message, as the DLQ's attributes keep them). The snapshot (__snapshots__/failure-record.test.ts.snap)
 * was written by the decoder as it was when the record was declared twice (zod, and hand-written rules
 * held to zod), so a change of verdict, path or wording shows here.
 */

function outcome(result: DecodeResult<unknown>) {
  if (result.ok) return { ok: true, value: result.value };
  expect(result.error).toBeInstanceOf(SchemaViolationError);
  const issues = (result.error as SchemaViolationError).issues.map((i) => `${i.path}: ${i.message}`);
  return { ok: false, error: result.error.name, issues };
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

describe("decodeFailureRecord on each case", () => {
  it.each(cases)("%s", (_label, value) => {
    expect(outcome(decodeFailureRecord(JSON.stringify(value)))).toMatchSnapshot();
  });

  it("accepts exactly the records of §1.6's shape", () => {
    const accepted = cases
      .filter(([, value]) => decodeFailureRecord(JSON.stringify(value)).ok)
      .map(([l]) => l);
    expect(accepted).toEqual([
      "a failure record",
      "a record age exceeded (no responseContext)",
      "a null functionError",
      "extra fields",
      "a stream ARN in a partition",
    ]);
  });

  it("drops the fields it does not know", () => {
    const decoded = decodeFailureRecord(
      JSON.stringify({ ...record, extra: 1, KinesisBatchInfo: { ...info, extra: true } }),
    );
    expect(decoded).toEqual({ ok: true, value: record });
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
