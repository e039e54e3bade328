import { type ClientOptions, type DeadLetterReason, once, type RequestOptions } from "@mcp-pipeline/aws";
import type { SQSRecord } from "aws-lambda";

/** Sends a message that can never succeed to a DLQ (sendToDeadLetterQueue with its client bound). */
export type DeadLetterSend = (
  queueUrl: string,
  record: SQSRecord,
  reason: DeadLetterReason,
  options?: RequestOptions,
) => Promise<void>;

/** The rare path's module: the SQS client factory and the send (@mcp-pipeline/aws/sqs-client). */
export type DeadLetterModule = typeof import("@mcp-pipeline/aws/sqs-client");

/**
 * A worker sends to SQS only for a poison message: the SQS client and SendMessage load on the first one,
 * not at cold start (docs/benchmarks/cold-start.md). Bundled with code splitting, the dynamic import is a
 * chunk set that an import of index.mjs neither parses nor evaluates. A failed load rejects that send,
 * which the batch runner reports as the message's failure for SQS to redeliver (nothing is lost), and
 * the next send loads again (`once`). `clientOptions` are the client's (the function's SDK retry bases);
 * `load` is the dynamic import; a test passes one that fails.
 */
export function lazyDeadLetterQueue(
  clientOptions: ClientOptions = {},
  load: () => Promise<DeadLetterModule> = () => import("@mcp-pipeline/aws/sqs-client"),
): DeadLetterSend {
  const sqs = once(async () => {
    const { sendToDeadLetterQueue, sqsClient } = await load();
    return { send: sendToDeadLetterQueue, client: sqsClient(clientOptions) };
  });
  return async (queueUrl, record, reason, options = {}) => {
    const { send, client } = await sqs();
    await send(client, queueUrl, record, reason, options);
  };
}
