import { InvalidArnError, streamNameOfArn } from "@mcp-pipeline/arn";
import type { KinesisStreamRecord } from "aws-lambda";
import type { KinesisSource } from "./schema.js";

/** A record is quarantined whatever its source ARN says: one that names no stream is filed under unknown-stream. */
function streamNameOf(streamArn: string): string {
  try {
    return streamNameOfArn(streamArn);
  } catch (error) {
    if (error instanceof InvalidArnError) return "unknown-stream";
    throw error;
  }
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
