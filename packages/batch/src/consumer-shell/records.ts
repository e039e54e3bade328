import { messageIdOf, partitionKeyOf, receiveCountOf, sequenceNumberOf } from "@mcp-pipeline/contracts";
import type { KinesisStreamRecord, SQSRecord } from "aws-lambda";

/** What a consumer reads from its event source: how its events are called and how a record is named in logs. */
export interface RecordSource<R> {
  /** The event a batch arrives in, for the error a wrong event gets: "a Kinesis event". */
  readonly event: string;
  /** The fields that find a record again in the source: logged with every failure. */
  readonly identify: (record: R) => Record<string, unknown>;
}

/**
 * Kinesis records are named by shard position and key (the key orders them, §1.4). Read without trusting
 * the record: a malformed one is logged too, and a field it lacks is left out rather than thrown over.
 */
export const kinesisRecords: RecordSource<KinesisStreamRecord> = {
  event: "a Kinesis event",
  identify: (record) => ({
    sequenceNumber: sequenceNumberOf(record),
    partitionKey: partitionKeyOf(record),
  }),
};

/** SQS messages are named by messageId, with the receive count that brings them nearer the DLQ (§2.3). */
export const sqsRecords: RecordSource<SQSRecord> = {
  event: "an SQS event",
  identify: (record) => ({
    messageId: messageIdOf(record),
    // As SQS writes it (text, §2.4), when it is a receive count at all.
    receiveCount: receiveCountOf(record)?.toString(),
  }),
};
