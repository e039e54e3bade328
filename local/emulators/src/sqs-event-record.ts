import type { Message, MessageSystemAttributeName } from "@aws-sdk/client-sqs";
import type { SQSMessageAttributes, SQSRecord, SQSRecordAttributes } from "aws-lambda";

/** The system attributes the SQS ESM asks for and passes on (docs/aws-semantics.md §2.4). */
export const ESM_SYSTEM_ATTRIBUTES: MessageSystemAttributeName[] = [
  "ApproximateReceiveCount",
  "SentTimestamp",
  "SenderId",
  "ApproximateFirstReceiveTimestamp",
  "SequenceNumber",
  "MessageGroupId",
  "MessageDeduplicationId",
];

/**
 * A message from ReceiveMessage in the shape Lambda's SQS event source delivers it (§2.4): attribute
 * values are strings, message attributes lowerCamel with empty list fields.
 */
export function toSqsEventRecord(message: Message, queueArn: string): SQSRecord {
  const attributes: Record<string, string> = {};
  for (const name of ESM_SYSTEM_ATTRIBUTES) {
    const value = message.Attributes?.[name];
    if (value !== undefined) attributes[name] = value;
  }
  const messageAttributes: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = {
      dataType: value.DataType ?? "String",
      ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
      ...(value.BinaryValue !== undefined
        ? { binaryValue: Buffer.from(value.BinaryValue).toString("base64") }
        : {}),
      stringListValues: [],
      binaryListValues: [],
    };
  }
  return {
    messageId: message.MessageId ?? "",
    receiptHandle: message.ReceiptHandle ?? "",
    body: message.Body ?? "",
    attributes: attributes as unknown as SQSRecordAttributes,
    messageAttributes,
    md5OfBody: message.MD5OfBody ?? "",
    // AWS sends null when there are none (§2.4); @types/aws-lambda has no null here, so it is left out.
    ...(message.MD5OfMessageAttributes !== undefined
      ? { md5OfMessageAttributes: message.MD5OfMessageAttributes }
      : {}),
    eventSource: "aws:sqs",
    eventSourceARN: queueArn,
    awsRegion: regionOf(queueArn),
  };
}

/**
 * The region field of a queue ARN (arn:partition:sqs:region:account:name). Read here rather than with
 * @mcp-pipeline/aws's parseArn: the shipped packages' tests depend on this package, so it depends on none of them.
 */
function regionOf(queueArn: string): string {
  const parts = queueArn.split(":");
  if (parts.length < 6 || parts[0] !== "arn") throw new Error(`not a queue ARN: ${queueArn}`);
  return parts[3] ?? "";
}
