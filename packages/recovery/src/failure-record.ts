import {
  BadJsonError,
  type DecodeResult,
  jsonErrorForLogs,
  SchemaViolationError,
} from "@mcp-pipeline/contracts";
import * as s from "@mcp-pipeline/contracts/light-schema";
import { dottedIssue } from "@mcp-pipeline/schema-issues";
import {
  FAILURE_RECORD_VERSION,
  FAILURE_RECORD_VERSION_MESSAGE,
  SHARD_ID,
  SHARD_ID_MESSAGE,
} from "./failure-record-format.js";
import type { KinesisFailureRecord } from "./failure-record-schema.js";

const sequenceRule = s.text({ pattern: /^\d{1,128}$/, patternMessage: "expected a sequence number" });
const shardIdRule = s.text({ pattern: SHARD_ID, patternMessage: SHARD_ID_MESSAGE });
const versionRule = s.text({
  pattern: FAILURE_RECORD_VERSION,
  patternMessage: FAILURE_RECORD_VERSION_MESSAGE,
});

/**
 * kinesisFailureRecordSchema, field for field, on hand-written rules: what decodeFailureRecord runs on
 * every failure record, so that dlq-redrive's cold start does not load zod (docs/benchmarks/cold-start.md).
 * The zod schema stays the definition; test/failure-record.test.ts holds the two to the same verdicts,
 * field paths, messages and values.
 */
const failureRecordRule = s.object({
  requestContext: s.object({
    requestId: s.text(),
    functionArn: s.text(),
    condition: s.text({ min: 1 }),
    approximateInvokeCount: s.integer({ min: 0 }),
  }),
  responseContext: s.optional(
    s.object({
      statusCode: s.integer({}),
      executedVersion: s.text(),
      functionError: s.nullable(s.text()),
    }),
  ),
  version: versionRule,
  timestamp: s.datetime(),
  KinesisBatchInfo: s.object({
    shardId: shardIdRule,
    startSequenceNumber: sequenceRule,
    endSequenceNumber: sequenceRule,
    approximateArrivalOfFirstRecord: s.datetime(),
    approximateArrivalOfLastRecord: s.datetime(),
    batchSize: s.integer({ min: 1 }),
    streamArn: s.text({
      pattern: /^arn:aws[a-z-]*:kinesis:[a-z0-9-]+:\d{12}:stream\/[a-zA-Z0-9_.-]+$/,
      patternMessage: "expected a stream ARN",
    }),
  }),
});

/** Parses an SQS body as an on-failure record; anything else is a typed decode error. */
export function decodeFailureRecord(body: string): DecodeResult<KinesisFailureRecord> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (cause) {
    // Not `{ cause }`: V8's message quotes the body, and the error is logged and kept in the DLQ's attributes.
    return { ok: false, error: new BadJsonError(`not JSON: ${jsonErrorForLogs(cause)}`) };
  }
  const parsed = failureRecordRule.safeParse(json);
  if (!parsed.success) {
    return {
      ok: false,
      error: new SchemaViolationError(parsed.error.issues.map((issue) => dottedIssue(issue))),
    };
  }
  return { ok: true, value: parsed.data as KinesisFailureRecord };
}
