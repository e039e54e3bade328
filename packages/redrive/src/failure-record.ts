import { BadJsonError, type DecodeResult, SchemaViolationError } from "@mcp-pipeline/contracts";
import * as z from "zod";

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
  version: z.string(),
  timestamp: instant,
  KinesisBatchInfo: z.object({
    shardId: z.string().min(1),
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

/** Parses an SQS body as an on-failure record; anything else is a typed decode error. */
export function decodeFailureRecord(body: string): DecodeResult<KinesisFailureRecord> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (cause) {
    return { ok: false, error: new BadJsonError(`not JSON: ${(cause as Error).message}`, { cause }) };
  }
  const parsed = kinesisFailureRecordSchema.safeParse(json);
  if (!parsed.success) {
    return {
      ok: false,
      error: new SchemaViolationError(
        parsed.error.issues.map((i) => ({
          path: i.path.map(String).join(".") || "(root)",
          message: i.message,
        })),
      ),
    };
  }
  return { ok: true, value: parsed.data };
}

export function streamNameOfArn(arn: string): string {
  return arn.slice(arn.indexOf("/") + 1);
}
