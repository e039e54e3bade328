import { createHash } from "node:crypto";
import type { MessageAttributeValue, SendMessageCommandInput } from "@aws-sdk/client-sqs";
import type { SQSRecord } from "aws-lambda";

export interface DeadLetterReason {
  readonly code: string;
  readonly message: string;
}

/** Message attributes the worker adds to a poison message; names are what operators filter on. */
export const DeadLetterAttribute = {
  ReasonCode: "pipeline.reason.code",
  ReasonMessage: "pipeline.reason.message",
  SourceMessageId: "pipeline.source.messageId",
  SourceQueueArn: "pipeline.source.queueArn",
  FailedAt: "pipeline.failedAt",
  /**
   * For operators to dedupe a standard DLQ, which does not de-duplicate: a worker that sent a message
   * here and then failed before acknowledging it sends it again on redelivery. Copies of one source
   * message share `SourceMessageId` and differ in `SourceReceiveCount` (keep the lowest); the same job
   * sent twice as two messages shares `BodySha256`.
   */
  SourceReceiveCount: "pipeline.source.receiveCount",
  BodySha256: "pipeline.source.bodySha256",
} as const;

/** SQS allows 10 message attributes; ours take seven, the message's own keep the rest, in order. */
const MAX_ATTRIBUTES = 10;

function originalAttributes(record: SQSRecord): Record<string, MessageAttributeValue> {
  const out: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(record.messageAttributes ?? {})) {
    if (value.dataType.startsWith("Binary") && value.binaryValue !== undefined) {
      out[name] = { DataType: value.dataType, BinaryValue: Buffer.from(value.binaryValue, "base64") };
    } else if (value.stringValue !== undefined) {
      out[name] = { DataType: value.dataType, StringValue: value.stringValue };
    }
  }
  return out;
}

/**
 * The DLQ message for a message that can never succeed: the reason in its message attributes, body
 * unchanged. For a FIFO DLQ the message keeps its group, and its messageId becomes the deduplication id,
 * so sending again after a crash within five minutes does not duplicate it. Sent by
 * sendToDeadLetterQueue (sqs-client.ts), which the workers load with the SQS client on the first poison
 * message (packages/worker/src/dead-letter-queue.ts).
 */
export function deadLetterMessage(
  queueUrl: string,
  record: SQSRecord,
  reason: DeadLetterReason,
  now: number,
): SendMessageCommandInput {
  const ours: Record<string, MessageAttributeValue> = {
    [DeadLetterAttribute.ReasonCode]: { DataType: "String", StringValue: reason.code },
    // SQS attribute values are limited only by the message size; keep the reason readable, not huge.
    [DeadLetterAttribute.ReasonMessage]: {
      DataType: "String",
      StringValue: reason.message.slice(0, 1024) || "-",
    },
    [DeadLetterAttribute.SourceMessageId]: { DataType: "String", StringValue: record.messageId },
    [DeadLetterAttribute.SourceQueueArn]: { DataType: "String", StringValue: record.eventSourceARN },
    [DeadLetterAttribute.FailedAt]: { DataType: "String", StringValue: new Date(now).toISOString() },
    [DeadLetterAttribute.SourceReceiveCount]: {
      DataType: "Number",
      StringValue: record.attributes.ApproximateReceiveCount || "1",
    },
    [DeadLetterAttribute.BodySha256]: {
      DataType: "String",
      StringValue: createHash("sha256").update(record.body, "utf8").digest("hex"),
    },
  };
  const kept = Object.entries(originalAttributes(record))
    .filter(([name]) => !(name in ours))
    .slice(0, MAX_ATTRIBUTES - Object.keys(ours).length);
  const fifo = queueUrl.endsWith(".fifo");
  return {
    QueueUrl: queueUrl,
    MessageBody: record.body,
    MessageAttributes: { ...Object.fromEntries(kept), ...ours },
    ...(fifo
      ? {
          MessageGroupId: record.attributes.MessageGroupId ?? record.messageId,
          MessageDeduplicationId: record.messageId,
        }
      : {}),
  };
}
