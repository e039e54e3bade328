import { ChangeMessageVisibilityBatchCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { messageOf } from "@mcp-pipeline/contracts";
import type { VisibilityChange } from "./redelivery-backoff.js";

export { sqsClient } from "@mcp-pipeline/aws/sqs-client";

/** A change SQS did not make, and why. */
export interface VisibilityFailure {
  readonly messageId: string;
  readonly reason: string;
}

/** SQS takes at most ten entries per ChangeMessageVisibilityBatch. */
const BATCH_ENTRIES = 10;

/**
 * Sets each message's visibility timeout on its source queue, ten entries a request, the requests at
 * once. Never throws: an entry SQS refuses, or a request that fails (or is aborted by `signal`), is
 * returned as a failure for each of its messages.
 */
export async function changeMessageVisibility(
  sqs: Pick<SQSClient, "send">,
  queueUrl: string,
  changes: readonly VisibilityChange[],
  signal?: AbortSignal,
): Promise<VisibilityFailure[]> {
  const chunks: VisibilityChange[][] = [];
  for (let i = 0; i < changes.length; i += BATCH_ENTRIES) chunks.push(changes.slice(i, i + BATCH_ENTRIES));
  const failures = await Promise.all(
    chunks.map(async (chunk): Promise<VisibilityFailure[]> => {
      try {
        const { Failed = [] } = await sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: queueUrl,
            // Entry ids are the chunk's indexes: messageIds are not always valid batch entry ids.
            Entries: chunk.map((c, j) => ({
              Id: String(j),
              ReceiptHandle: c.receiptHandle,
              VisibilityTimeout: c.visibilityTimeoutSeconds,
            })),
          }),
          signal ? { abortSignal: signal } : {},
        );
        return Failed.map((f) => ({
          messageId: chunk[Number(f.Id)]?.messageId ?? `entry ${f.Id}`,
          reason: `${f.Code ?? "error"}: ${f.Message ?? "no message"}`,
        }));
      } catch (error) {
        return chunk.map((c) => ({ messageId: c.messageId, reason: messageOf(error) }));
      }
    }),
  );
  return failures.flat();
}
