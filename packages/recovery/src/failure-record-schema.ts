import * as s from "@mcp-pipeline/contracts/light-schema";

/**
 * A Kinesis shard id as the API takes it: 1-128 characters of [a-zA-Z0-9_.-] (docs/aws-semantics.md §1.6).
 * Anything else could only fail the re-read, again on every retry, instead of going to the DLQ at once.
 */
const SHARD_ID = /^[a-zA-Z0-9_.-]{1,128}$/;
const SHARD_ID_MESSAGE = "expected a shard id (1-128 characters of a-z, A-Z, 0-9, _ . -)";
/** The record's format: "1.0" is all AWS sends (§1.6); another major version is kept for a person. */
const FAILURE_RECORD_VERSION = /^1\.\d+$/;
const FAILURE_RECORD_VERSION_MESSAGE = "unsupported version: this consumer reads 1.x";

const sequence = s.text({ pattern: /^\d{1,128}$/, patternMessage: "expected a sequence number" });

/**
 * The on-failure record Lambda's Kinesis ESM sends to SQS (docs/aws-semantics.md §1.6): metadata only.
 * "All of the fields shown in the KinesisBatchInfo property will always be present." Declared once, with
 * light-schema, so that dlq-redrive's decoder (failure-record.ts) checks with it without loading zod.
 */
export const kinesisFailureRecordSchema = s.object({
  requestContext: s.object({
    requestId: s.text(),
    functionArn: s.text(),
    condition: s.text({ min: 1 }),
    approximateInvokeCount: s.integer({ min: 0 }),
  }),
  /** Absent for RecordAgeExceeded (AWS-recorded). */
  responseContext: s.optional(
    s.object({
      statusCode: s.integer({}),
      executedVersion: s.text(),
      functionError: s.nullable(s.text()),
    }),
  ),
  version: s.text({ pattern: FAILURE_RECORD_VERSION, patternMessage: FAILURE_RECORD_VERSION_MESSAGE }),
  timestamp: s.datetime(),
  KinesisBatchInfo: s.object({
    shardId: s.text({ pattern: SHARD_ID, patternMessage: SHARD_ID_MESSAGE }),
    startSequenceNumber: sequence,
    endSequenceNumber: sequence,
    approximateArrivalOfFirstRecord: s.datetime(),
    approximateArrivalOfLastRecord: s.datetime(),
    batchSize: s.integer({ min: 1 }),
    streamArn: s.text({
      pattern: /^arn:aws[a-z-]*:kinesis:[a-z0-9-]+:\d{12}:stream\/[a-zA-Z0-9_.-]+$/,
      patternMessage: "expected a stream ARN",
    }),
  }),
});

export type KinesisFailureRecord = s.Infer<typeof kinesisFailureRecordSchema>;
