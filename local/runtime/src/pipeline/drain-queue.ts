/** Reads a dead-letter queue into the caller's hands: every message received, then deleted. */
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";

export interface DrainedMessage {
  readonly id: string;
  readonly body: string;
  /** The message's string attributes (the worker's reason, the source messageId...). */
  readonly attributes: Readonly<Record<string, string>>;
  /** MessageGroupId on a FIFO queue, else undefined. */
  readonly group: string | undefined;
}

/**
 * Receives every message visible now and hands each page to `keep` before deleting it. A FIFO queue
 * returns no later message of a group while an earlier one is in flight (docs/aws-semantics.md §3), so
 * reading without deleting (a peek) hides the second message of a group until the first's visibility
 * timeout ends: a ledger that peeks sees a loss that is not one. Deleting is safe only because the
 * caller has kept the messages (body and attributes: what a replay needs) by then: a page is kept
 * before its delete, so a call that fails later (the SQS endpoint restarting) rejects without taking
 * away what was already deleted. A `keep` that throws leaves its page in the queue.
 */
export async function drainQueue(
  sqs: SQSClient,
  queueUrl: string,
  keep: (page: readonly DrainedMessage[]) => void,
): Promise<void> {
  await readQueue(sqs, queueUrl, keep, true);
}

/**
 * Reads every message visible now without deleting it: each stays hidden for a minute, then comes
 * back. For a queue that another consumer owns; never for a FIFO queue one means to read whole.
 */
export async function peekQueue(sqs: SQSClient, queueUrl: string): Promise<DrainedMessage[]> {
  const out: DrainedMessage[] = [];
  await readQueue(sqs, queueUrl, (page) => out.push(...page), false);
  return out;
}

/** Hands each page of what is visible now to `onPage`; with `take`, then deletes that page. */
async function readQueue(
  sqs: SQSClient,
  queueUrl: string,
  onPage: (page: readonly DrainedMessage[]) => void,
  take: boolean,
): Promise<void> {
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 60,
        // No long poll: the source queues wait 20 s per empty receive (terraform/modules/queue), and the
        // callers loop and decide when to stop.
        WaitTimeSeconds: 0,
        MessageAttributeNames: ["All"],
        MessageSystemAttributeNames: ["MessageGroupId"],
      }),
    );
    if (Messages.length === 0) return;
    const page = Messages.map(
      (m): DrainedMessage => ({
        id: m.MessageId ?? "",
        body: m.Body ?? "",
        attributes: Object.fromEntries(
          Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue ?? ""]),
        ),
        group: m.Attributes?.MessageGroupId,
      }),
    );
    onPage(page);
    if (!take) continue;
    // A failed delete leaves the message to come back after its visibility timeout: read twice, kept
    // by messageId, never lost.
    await sqs
      .send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: Messages.map((m, n) => ({ Id: String(n), ReceiptHandle: m.ReceiptHandle ?? "" })),
        }),
      )
      .catch(() => undefined);
  }
}
