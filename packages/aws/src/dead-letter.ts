import { createHash } from "node:crypto";
import type { MessageAttributeValue, SendMessageCommandInput } from "@aws-sdk/client-sqs";
import {
  eventSourceArnOf,
  messageGroupIdOf,
  messageIdOf,
  previewOf,
  receiveCountOf,
} from "@mcp-pipeline/contracts";
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

/** How much of a malformed record (one without a body to send) its DLQ message carries instead. */
const MALFORMED_BODY_MAX_CHARS = 16_384;

type Fields = Readonly<Record<string, unknown>>;
const isFields = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A field of the record, which may not even be an object (a malformed record). */
function fieldOf(record: SQSRecord, name: keyof SQSRecord): unknown {
  const fields: unknown = record;
  return isFields(fields) ? fields[name] : undefined;
}

function originalAttributes(record: SQSRecord): Record<string, MessageAttributeValue> {
  const out: Record<string, MessageAttributeValue> = {};
  const attributes = fieldOf(record, "messageAttributes");
  if (!isFields(attributes)) return out;
  for (const [name, value] of Object.entries(attributes)) {
    if (!isFields(value) || typeof value.dataType !== "string") continue;
    if (value.dataType.startsWith("Binary") && typeof value.binaryValue === "string") {
      out[name] = { DataType: value.dataType, BinaryValue: Buffer.from(value.binaryValue, "base64") };
    } else if (typeof value.stringValue === "string") {
      out[name] = { DataType: value.dataType, StringValue: value.stringValue };
    }
  }
  return out;
}

/**
 * What the DLQ message holds: the record's body, unchanged (an empty one too: SQS refuses it, §2.5, and the
 * message stays reported, as it could never have been in a queue). A malformed record without a body, or
 * with something else than text in its place, sends what the function received instead, so that nothing
 * it had is dropped: the record as JSON-like text (previewOf: bounded, never throws, whatever it holds).
 */
function bodyOf(record: SQSRecord): string {
  const body = fieldOf(record, "body");
  if (typeof body === "string") return body;
  return `malformed SQS record, no body to send; as received: ${previewOf(record, MALFORMED_BODY_MAX_CHARS)}`;
}

/**
 * The DLQ message for a message that can never succeed: the reason in its message attributes, body
 * unchanged. For a FIFO DLQ the message keeps its group, and its messageId becomes the deduplication id,
 * so sending again after a crash within five minutes does not duplicate it. Sent by
 * sendToDeadLetterQueue (sqs-client.ts), which the workers load with the SQS client on the first poison
 * message (packages/worker/src/dead-letter-queue.ts).
 *
 * A malformed record is sent too, with what it has: `-` for an id or ARN it lacks, `1` for its receive count,
 * its body's SHA-256 for a FIFO deduplication id, and a group of its own.
 */
export function deadLetterMessage(
  queueUrl: string,
  record: SQSRecord,
  reason: DeadLetterReason,
  now: number,
): SendMessageCommandInput {
  const body = bodyOf(record);
  const bodySha256 = createHash("sha256").update(body, "utf8").digest("hex");
  // Read without trusting the record: a malformed one (contracts' lambda-records) is dead-lettered too.
  const messageId = messageIdOf(record);
  const ours: Record<string, MessageAttributeValue> = {
    [DeadLetterAttribute.ReasonCode]: { DataType: "String", StringValue: reason.code },
    // SQS attribute values are limited only by the message size; keep the reason readable, not huge.
    [DeadLetterAttribute.ReasonMessage]: {
      DataType: "String",
      StringValue: reason.message.slice(0, 1024) || "-",
    },
    [DeadLetterAttribute.SourceMessageId]: { DataType: "String", StringValue: messageId ?? "-" },
    [DeadLetterAttribute.SourceQueueArn]: {
      DataType: "String",
      StringValue: eventSourceArnOf(record) ?? "-",
    },
    [DeadLetterAttribute.FailedAt]: { DataType: "String", StringValue: new Date(now).toISOString() },
    [DeadLetterAttribute.SourceReceiveCount]: {
      DataType: "Number",
      StringValue: String(receiveCountOf(record) ?? 1),
    },
    [DeadLetterAttribute.BodySha256]: { DataType: "String", StringValue: bodySha256 },
  };
  const kept = Object.entries(originalAttributes(record))
    .filter(([name]) => !(name in ours))
    .slice(0, MAX_ATTRIBUTES - Object.keys(ours).length);
  const fifo = queueUrl.endsWith(".fifo");
  return {
    QueueUrl: queueUrl,
    MessageBody: body,
    MessageAttributes: { ...Object.fromEntries(kept), ...ours },
    ...(fifo
      ? {
          MessageGroupId: messageGroupIdOf(record) ?? messageId ?? `malformed-${bodySha256}`,
          MessageDeduplicationId: messageId ?? bodySha256,
        }
      : {}),
  };
}
