import * as z from "zod";
import {
  FAILURE_RECORD_VERSION,
  FAILURE_RECORD_VERSION_MESSAGE,
  SHARD_ID,
  SHARD_ID_MESSAGE,
} from "./failure-record-format.js";

// Apart from failure-record.ts, which decodes with hand-written rules: a file that a bundle reaches keeps
// its zod calls (esbuild cannot tell they are pure), a file it does not reach is dropped whole.

const sequence = z.string().regex(/^\d{1,128}$/, "expected a sequence number");
const instant = z.iso.datetime();

/**
 * The on-failure record Lambda's Kinesis ESM sends to SQS (docs/aws-semantics.md §1.6): metadata only.
 * "All of the fields shown in the KinesisBatchInfo property will always be present."
 */
export const kinesisFailureRecordSchema = z.object({
  requestContext: z.object({
    requestId: z.string(),
    functionArn: z.string(),
    condition: z.string().min(1),
    approximateInvokeCount: z.number().int().min(0),
  }),
  /** Absent for RecordAgeExceeded (AWS-recorded). */
  responseContext: z
    .object({
      statusCode: z.number().int(),
      executedVersion: z.string(),
      functionError: z.string().nullable(),
    })
    .optional(),
  version: z.string().regex(FAILURE_RECORD_VERSION, FAILURE_RECORD_VERSION_MESSAGE),
  timestamp: instant,
  KinesisBatchInfo: z.object({
    shardId: z.string().regex(SHARD_ID, SHARD_ID_MESSAGE),
    startSequenceNumber: sequence,
    endSequenceNumber: sequence,
    approximateArrivalOfFirstRecord: instant,
    approximateArrivalOfLastRecord: instant,
    batchSize: z.number().int().min(1),
    streamArn: z
      .string()
      .regex(/^arn:aws[a-z-]*:kinesis:[a-z0-9-]+:\d{12}:stream\/[a-zA-Z0-9_.-]+$/, "expected a stream ARN"),
  }),
});

export type KinesisFailureRecord = z.infer<typeof kinesisFailureRecordSchema>;
