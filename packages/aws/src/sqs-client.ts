import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { SQSRecord } from "aws-lambda";
import { type ClientOptions, commonClientConfig } from "./client-options.js";
import { type DeadLetterReason, deadLetterMessage } from "./dead-letter.js";
import { type RequestOptions, sendOptions } from "./request-options.js";

// An entry of its own ("@mcp-pipeline/aws/sqs-client"), not an export of the index: the workers send to
// SQS only for a poison message and load this module then (lazyDeadLetterQueue); a file the index reaches
// is loaded at every cold start of a function that uses it anywhere (docs/benchmarks/cold-start.md).

/**
 * Requests go to the configured or regional endpoint, not to the host in each QueueUrl: emulators
 * hand out queue URLs whose hosts (sqs.us-east-1.127.0.0.1) are not valid URLs.
 */
export function sqsClient(options: ClientOptions = {}): SQSClient {
  return new SQSClient({ ...commonClientConfig(options), useQueueUrlAsEndpoint: false });
}

/** Sends a message that can never succeed to the source queue's DLQ (deadLetterMessage: what is sent). */
export async function sendToDeadLetterQueue(
  sqs: SQSClient,
  queueUrl: string,
  record: SQSRecord,
  reason: DeadLetterReason,
  options: RequestOptions & { readonly now?: () => number } = {},
): Promise<void> {
  const now = options.now ?? Date.now;
  await sqs.send(
    new SendMessageCommand(deadLetterMessage(queueUrl, record, reason, now())),
    sendOptions(options),
  );
}
