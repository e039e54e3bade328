import type { KinesisStreamRecord, SQSRecord } from "aws-lambda";

export const TEST_REGION = "us-east-1";
export const TEST_ACCOUNT = "123456789012";
export const TEST_STREAM_ARN = `arn:aws:kinesis:${TEST_REGION}:${TEST_ACCOUNT}:stream/tool-call-events`;

/** A Kinesis sequence number: 56 digits, increasing with `n` (docs/aws-semantics.md §1.7). */
export function sequenceNumber(n: number): string {
  return `4959033827149025660855969253836157109592157598913${String(n).padStart(7, "0")}`;
}

export interface KinesisRecordInit {
  readonly partitionKey: string;
  /** The record's payload: bytes, a string, or anything JSON-serialisable. */
  readonly data: Uint8Array | string | object;
  readonly sequence: number;
  readonly shardId?: string;
  readonly arrivalEpochSeconds?: number;
}

function toBase64(data: KinesisRecordInit["data"]): string {
  if (data instanceof Uint8Array) return Buffer.from(data).toString("base64");
  return Buffer.from(typeof data === "string" ? data : JSON.stringify(data), "utf8").toString("base64");
}

/** A record in the exact shape Lambda delivers (§1.7). */
export function kinesisRecord(init: KinesisRecordInit): KinesisStreamRecord {
  const shardId = init.shardId ?? "shardId-000000000000";
  const seq = sequenceNumber(init.sequence);
  return {
    kinesis: {
      kinesisSchemaVersion: "1.0",
      partitionKey: init.partitionKey,
      sequenceNumber: seq,
      data: toBase64(init.data),
      approximateArrivalTimestamp: init.arrivalEpochSeconds ?? 1_795_996_800.123,
    },
    eventSource: "aws:kinesis",
    eventVersion: "1.0",
    eventID: `${shardId}:${seq}`,
    eventName: "aws:kinesis:record",
    invokeIdentityArn: `arn:aws:iam::${TEST_ACCOUNT}:role/processor`,
    awsRegion: TEST_REGION,
    eventSourceARN: TEST_STREAM_ARN,
  };
}

/** A Kinesis record whose data is raw base64 text, for malformed-input tests. */
export function kinesisRecordWithRawData(
  init: Omit<KinesisRecordInit, "data">,
  base64: string,
): KinesisStreamRecord {
  const record = kinesisRecord({ ...init, data: "" });
  return { ...record, kinesis: { ...record.kinesis, data: base64 } };
}

export interface KinesisFailureRecordInit {
  readonly streamArn: string;
  readonly start: string;
  /** The range's last sequence number; the range is the one record `start` when absent. */
  readonly end?: string;
  readonly batchSize?: number;
  readonly shardId?: string;
  readonly lastArrival?: string;
}

/**
 * The on-failure record Lambda's Kinesis ESM sends once a batch's retries are exhausted
 * (docs/aws-semantics.md §1.6): the range of the batch, never its data.
 */
export function kinesisFailureRecord(init: KinesisFailureRecordInit) {
  return {
    requestContext: {
      requestId: "c9b8fa9f-5a7f-4b2a-af9c-0c604cde93a5",
      functionArn: `arn:aws:lambda:${TEST_REGION}:${TEST_ACCOUNT}:function:processor`,
      condition: "RetryAttemptsExhausted",
      approximateInvokeCount: 4,
    },
    responseContext: { statusCode: 200, executedVersion: "$LATEST", functionError: "Unhandled" },
    version: "1.0",
    timestamp: "2026-11-30T10:00:00.000Z",
    KinesisBatchInfo: {
      shardId: init.shardId ?? "shardId-000000000000",
      startSequenceNumber: init.start,
      endSequenceNumber: init.end ?? init.start,
      approximateArrivalOfFirstRecord: "2026-11-30T09:59:00.000Z",
      approximateArrivalOfLastRecord: init.lastArrival ?? "2026-11-30T09:59:00.000Z",
      batchSize: init.batchSize ?? 1,
      streamArn: init.streamArn,
    },
  };
}

export interface SqsRecordInit {
  readonly messageId: string;
  readonly body: string;
  readonly groupId?: string;
  readonly receiveCount?: number;
  readonly queueArn?: string;
}

/** A message in the shape Lambda delivers (§2.4); FIFO attributes when `groupId` is set (§3). */
export function sqsRecord(init: SqsRecordInit): SQSRecord {
  const attributes: SQSRecord["attributes"] = {
    ApproximateReceiveCount: String(init.receiveCount ?? 1),
    SentTimestamp: "1795996800000",
    SenderId: "AIDAIENQZJOLO23YVJ4VO",
    ApproximateFirstReceiveTimestamp: "1795996800005",
  };
  if (init.groupId !== undefined) {
    attributes.MessageGroupId = init.groupId;
    attributes.MessageDeduplicationId = init.messageId;
    attributes.SequenceNumber = sequenceNumber(Number.parseInt(init.messageId.replace(/\D/g, "") || "0", 10));
  }
  return {
    messageId: init.messageId,
    receiptHandle: `handle-${init.messageId}`,
    body: init.body,
    attributes,
    messageAttributes: {},
    md5OfBody: "",
    eventSource: "aws:sqs",
    eventSourceARN: init.queueArn ?? `arn:aws:sqs:${TEST_REGION}:${TEST_ACCOUNT}:tool-calls`,
    awsRegion: TEST_REGION,
  };
}
