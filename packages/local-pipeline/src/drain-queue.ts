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
 * Receives every message visible now and deletes each once it is in the returned list. A FIFO queue
 * returns no later message of a group while an earlier one is in flight (docs/aws-semantics.md §3), so
 * reading without deleting (a peek) hides the second message of a group until the first's visibility
 * timeout ends: a ledger that peeks sees a loss that is not one. Deleting is safe only because the
 * caller keeps the messages (body and attributes: what a replay needs) from then on.
 */
export async function drainQueue(sqs: SQSClient, queueUrl: string): Promise<DrainedMessage[]> {
  const out: DrainedMessage[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 60,
        // A drain must not long-poll: it is called in a loop that decides when to stop.
        WaitTimeSeconds: 0,
        MessageAttributeNames: ["All"],
        MessageSystemAttributeNames: ["MessageGroupId"],
      }),
    );
    if (Messages.length === 0) return out;
    for (const m of Messages) {
      out.push({
        id: m.MessageId ?? "",
        body: m.Body ?? "",
        attributes: Object.fromEntries(
          Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue ?? ""]),
        ),
        group: m.Attributes?.MessageGroupId,
      });
    }
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
