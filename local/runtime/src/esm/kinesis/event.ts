import type { _Record as KinesisApiRecord } from "@aws-sdk/client-kinesis";
import type { KinesisStreamRecord } from "aws-lambda";

/** A record as the shard holds it, with the arrival time in ms. */
export interface ShardRecord {
  readonly sequenceNumber: string;
  readonly partitionKey: string;
  readonly data: Uint8Array;
  readonly arrivalMs: number;
}

export function shardRecordOf(record: KinesisApiRecord): ShardRecord {
  return {
    sequenceNumber: record.SequenceNumber ?? "",
    partitionKey: record.PartitionKey ?? "",
    data: record.Data ?? new Uint8Array(),
    arrivalMs: record.ApproximateArrivalTimestamp?.getTime() ?? Date.now(),
  };
}

export interface StreamIdentity {
  readonly streamArn: string;
  readonly region: string;
  readonly roleArn: string;
}

/** The record in the shape Lambda delivers it (docs/aws-semantics.md §1.7). */
export function kinesisEventRecord(
  record: ShardRecord,
  shardId: string,
  stream: StreamIdentity,
): KinesisStreamRecord {
  return {
    kinesis: {
      kinesisSchemaVersion: "1.0",
      partitionKey: record.partitionKey,
      sequenceNumber: record.sequenceNumber,
      data: Buffer.from(record.data).toString("base64"),
      // Epoch seconds as a float with millisecond precision.
      approximateArrivalTimestamp: record.arrivalMs / 1000,
    },
    eventSource: "aws:kinesis",
    eventVersion: "1.0",
    eventID: `${shardId}:${record.sequenceNumber}`,
    eventName: "aws:kinesis:record",
    invokeIdentityArn: stream.roleArn,
    awsRegion: stream.region,
    eventSourceARN: stream.streamArn,
  };
}

/** Lambda's synchronous invoke payload limit (§1.1): "cannot be modified". */
export const MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;

/** Bytes a record adds to the serialised event (its JSON plus a separating comma). */
export function eventRecordBytes(record: KinesisStreamRecord): number {
  return Buffer.byteLength(JSON.stringify(record)) + 1;
}
