import * as z from "zod";
import { MAX_ARRIVAL_SECONDS, QUARANTINE_FORMAT_VERSION } from "./version.js";

/**
 * The quarantine format (v1) as zod schemas: the definition, and what validate.ts is held to by
 * test/validate.test.ts. Only types are taken from here at run time, so a bundle that writes or reads
 * quarantine records carries no zod (docs/benchmarks/cold-start.md).
 */

/** Why a record was set aside. `code` is a decode error code, a handler's permanent code, or an ESM condition. */
export const quarantineReasonSchema = z.object({
  code: z.string().min(1),
  message: z.string(),
  details: z.unknown().optional(),
});

export const kinesisSourceSchema = z.object({
  kind: z.literal("kinesis"),
  streamArn: z.string().min(1),
  shardId: z.string().min(1),
  sequenceNumber: z.string().regex(/^\d{1,128}$/),
  partitionKey: z.string().min(1).max(256),
  /**
   * Epoch seconds with milliseconds, as Lambda delivers it (docs/aws-semantics.md §1.7), within what a Date
   * holds: the key and the counts by day are dated by it.
   */
  approximateArrivalTimestamp: z.number().min(0).max(MAX_ARRIVAL_SECONDS),
});

/** What the Kinesis ESM's on-failure record said about the failure (§1.6), when that is the origin. */
export const failureContextSchema = z.object({
  condition: z.string().optional(),
  approximateInvokeCount: z.number().int().optional(),
  functionError: z.string().nullable().optional(),
  requestId: z.string().optional(),
  functionArn: z.string().optional(),
  timestamp: z.string().optional(),
});

export const quarantineRecordSchema = z.object({
  formatVersion: z.literal(QUARANTINE_FORMAT_VERSION),
  source: kinesisSourceSchema,
  /** The record's bytes exactly as the stream held them, base64: replay puts back these bytes. */
  data: z.string(),
  reason: quarantineReasonSchema,
  failure: failureContextSchema.optional(),
  quarantinedAt: z.iso.datetime(),
  /** The function that wrote the record. */
  quarantinedBy: z.string().min(1),
});

export type QuarantineReason = z.infer<typeof quarantineReasonSchema>;
export type KinesisSource = z.infer<typeof kinesisSourceSchema>;
export type FailureContext = z.infer<typeof failureContextSchema>;
export type QuarantineRecord = z.infer<typeof quarantineRecordSchema>;
