import { InvalidArnError, streamNameOfArn } from "@mcp-pipeline/aws/arn";
import {
  arrivalSecondsOf,
  eventSourceArnOf,
  partitionKeyOf,
  sequenceNumberOf,
} from "@mcp-pipeline/contracts";
import type { KinesisStreamRecord } from "aws-lambda";
import type { KinesisSource } from "./schema.js";
import { MAX_ARRIVAL_SECONDS } from "./version.js";

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
  const eventId: unknown = (record as Partial<KinesisStreamRecord> | null)?.eventID;
  const separator = typeof eventId === "string" ? eventId.lastIndexOf(":") : -1;
  return typeof eventId === "string" && separator > 0 ? eventId.slice(0, separator) : "unknown-shard";
}

/**
 * What stands in for a partition key that a malformed record lacks (or holds one Kinesis would not take,
 * §1.7): the record is quarantined with it rather than not at all, and a replay puts it back under it.
 */
export const UNKNOWN_PARTITION_KEY = "unknown-partition-key";

/** Kinesis takes partition keys of 1 to 256 characters. */
const PARTITION_KEY_MAX = 256;

/**
 * Where a record came from, as the quarantine keeps it. A malformed record (contracts' lambda-records: the
 * processor quarantines it as `malformed-record`) is kept with what it has: `unknown-stream`,
 * `unknown-shard` and UNKNOWN_PARTITION_KEY stand in for what it lacks, and `now` (epoch ms) for an arrival
 * it lacks or one no date holds. A record without a sequence number is the one thing no stand-in can file: the format refuses it.
 */
export function kinesisSourceOf(record: KinesisStreamRecord, now: number = Date.now()): KinesisSource {
  const partitionKey = partitionKeyOf(record);
  const arrival = arrivalSecondsOf(record);
  return {
    kind: "kinesis",
    streamArn: eventSourceArnOf(record) ?? "unknown-stream",
    shardId: shardIdOf(record),
    sequenceNumber: sequenceNumberOf(record) ?? "",
    partitionKey:
      partitionKey !== undefined && partitionKey.length <= PARTITION_KEY_MAX
        ? partitionKey
        : UNKNOWN_PARTITION_KEY,
    approximateArrivalTimestamp:
      arrival !== undefined && arrival >= 0 && arrival <= MAX_ARRIVAL_SECONDS ? arrival : now / 1000,
  };
}

/**
 * The record's `kinesis.data` as the quarantine keeps it: base64 text. A malformed record without it (or
 * with something else in its place) keeps no bytes; its reason names the field, and its source position
 * says where the stream holds the bytes while it retains them.
 */
export function kinesisDataOf(record: KinesisStreamRecord): string {
  const kinesis: unknown = (record as Partial<KinesisStreamRecord> | null)?.kinesis;
  const data =
    typeof kinesis === "object" && kinesis !== null ? (kinesis as { data?: unknown }).data : undefined;
  return typeof data === "string" ? data : "";
}
