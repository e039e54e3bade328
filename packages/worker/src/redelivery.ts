import { type ClientOptions, once } from "@mcp-pipeline/aws";
import { queueUrlOfArn } from "@mcp-pipeline/aws/arn";
import { type BatchOutcome, needsRedelivery } from "@mcp-pipeline/batch";
import { eventSourceArnOf, messageIdOf, messageOf } from "@mcp-pipeline/contracts";
import type { ToolLogger } from "@mcp-pipeline/tools/registry";
import type { SQSRecord } from "aws-lambda";
import type { QueueMode } from "./queue-mode.js";
import {
  planVisibilityChanges,
  type RedeliveryBackoff,
  type VisibilityChange,
} from "./redelivery-backoff.js";
import type { VisibilityFailure } from "./sqs-visibility.js";

/** Sets messages' visibility timeouts on a queue; resolves with the changes that were not made, never throws. */
export type ChangeVisibility = (
  queueUrl: string,
  changes: readonly VisibilityChange[],
  signal: AbortSignal,
) => Promise<readonly VisibilityFailure[]>;

/** The backoff of the jobs reported for retry, and how to apply it. */
export interface Redelivery {
  readonly backoff: RedeliveryBackoff;
  readonly changeVisibility: ChangeVisibility;
  /** [0, 1), as Math.random; a test passes a seeded one. */
  readonly random?: () => number;
}

/**
 * Sets the visibility timeout of the messages the batch reports for retry (planVisibilityChanges), so
 * that they come back after their backoff instead of the queue's whole visibility timeout (§2.3, §2.6).
 * Best effort, and it decides nothing: the messages are reported failed whatever happens here. A change
 * that fails leaves its message to come back after the full visibility timeout, with a warning; nothing
 * is lost. `signal` ends the changes in time for the invocation's answer (requestDeadlines' `settle`, in
 * @mcp-pipeline/batch): they must not turn into a timeout. Returns how many messages were given a backoff.
 */
export async function backOffRedeliveries(
  records: readonly SQSRecord[],
  outcome: BatchOutcome<SQSRecord>,
  mode: QueueMode,
  redelivery: Redelivery,
  signal: AbortSignal,
  logger: ToolLogger,
): Promise<number> {
  const reported = records.filter((_, i) => {
    const result = outcome.outcomes[i];
    return result !== undefined && needsRedelivery(result);
  });
  const byQueue = new Map<string, SQSRecord[]>();
  for (const record of reported) {
    // A malformed record whose DLQ refused it is reported too; without its queue, id or receipt handle
    // there is nothing to change, and it comes back after the visibility timeout.
    const arn = eventSourceArnOf(record);
    const messageId = messageIdOf(record);
    // Read only once messageId says that the record is an object.
    if (arn === undefined || messageId === undefined || typeof record.receiptHandle !== "string") {
      logger.warn(
        "cannot shorten a retried record's visibility: it has no queue ARN, messageId or receipt handle",
        {
          messageId,
        },
      );
      continue;
    }
    byQueue.set(arn, [...(byQueue.get(arn) ?? []), record]);
  }
  const random = redelivery.random ?? Math.random;
  let changed = 0;
  for (const [arn, queued] of byQueue) {
    const changes = planVisibilityChanges(queued, mode, redelivery.backoff, random);
    if (changes.length === 0) continue;
    const failures = await apply(arn, changes, redelivery, signal);
    for (const failure of failures)
      logger.warn("could not shorten a retried job's visibility; it returns after the visibility timeout", {
        messageId: failure.messageId,
        error: failure.reason,
      });
    changed += changes.length - failures.length;
  }
  return changed;
}

async function apply(
  arn: string,
  changes: readonly VisibilityChange[],
  redelivery: Redelivery,
  signal: AbortSignal,
): Promise<readonly VisibilityFailure[]> {
  const failAll = (reason: string) => changes.map((c) => ({ messageId: c.messageId, reason }));
  if (signal.aborted) return failAll("no time left in the invocation");
  let queueUrl: string;
  try {
    queueUrl = queueUrlOfArn(arn);
  } catch (error) {
    return failAll(messageOf(error));
  }
  try {
    return await redelivery.changeVisibility(queueUrl, changes, signal);
  } catch (error) {
    return failAll(messageOf(error));
  }
}

/** The SQS side of the backoff (@aws-sdk/client-sqs's ChangeMessageVisibilityBatch and a client). */
export type VisibilityModule = typeof import("./sqs-visibility.js");

/**
 * Like the DLQ's send (lazyDeadLetterQueue), the SQS client and ChangeMessageVisibilityBatch load on the
 * first job reported for retry, not at cold start (docs/benchmarks/cold-start.md). A failed load fails
 * that batch's changes (their messages come back after the visibility timeout) and the next call loads
 * again. `clientOptions` are the client's (the function's SDK retry bases); `load` is the dynamic import; a
 * test passes one that fails.
 */
export function lazyChangeVisibility(
  clientOptions: ClientOptions = {},
  load: () => Promise<VisibilityModule> = () => import("./sqs-visibility.js"),
): ChangeVisibility {
  const sqs = once(async () => {
    const { changeMessageVisibility, sqsClient } = await load();
    return { change: changeMessageVisibility, client: sqsClient(clientOptions) };
  });
  return async (queueUrl, changes, signal) => {
    const { change, client } = await sqs();
    return change(client, queueUrl, changes, signal);
  };
}
