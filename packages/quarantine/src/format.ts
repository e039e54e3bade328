import type { KinesisStreamRecord } from "aws-lambda";
import * as z from "zod";

export const QUARANTINE_FORMAT_VERSION = 1;

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
  /** Epoch seconds with milliseconds, as Lambda delivers it (esm-semantics.md §1.7). */
  approximateArrivalTimestamp: z.number(),
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

function streamNameOf(streamArn: string): string {
  const name = streamArn.split("/").at(-1);
  return name && name.length > 0 ? name : "unknown-stream";
}

/**
 * `kinesis/<stream>/<yyyy>/<mm>/<dd>/<shardId>/<sequenceNumber>.json`, dated by the record's arrival.
 * The key depends only on the record, so writing the same record twice stores one copy (the
 * processor and dlq-redrive may both see it), and a time range is a key prefix.
 */
export function quarantineKeyFor(source: KinesisSource): string {
  const day = new Date(Math.floor(source.approximateArrivalTimestamp * 1000)).toISOString().slice(0, 10);
  const [yyyy, mm, dd] = day.split("-");
  return `kinesis/${streamNameOf(source.streamArn)}/${yyyy}/${mm}/${dd}/${source.shardId}/${source.sequenceNumber}.json`;
}

/** `eventID` is `<shardId>:<sequenceNumber>` (§1.7). */
export function shardIdOf(record: KinesisStreamRecord): string {
  const separator = record.eventID.lastIndexOf(":");
  return separator > 0 ? record.eventID.slice(0, separator) : "unknown-shard";
}

export function kinesisSourceOf(record: KinesisStreamRecord): KinesisSource {
  return {
    kind: "kinesis",
    streamArn: record.eventSourceARN,
    shardId: shardIdOf(record),
    sequenceNumber: record.kinesis.sequenceNumber,
    partitionKey: record.kinesis.partitionKey,
    approximateArrivalTimestamp: record.kinesis.approximateArrivalTimestamp,
  };
}
