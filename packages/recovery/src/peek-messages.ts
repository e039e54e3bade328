import {
  ChangeMessageVisibilityBatchCommand,
  type Message,
  type MessageSystemAttributeName,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { DeadLetterAttribute } from "@mcp-pipeline/aws";
import { deadLetterFailureKind, deadLetterReason, type FailureKind } from "./failure-kind.js";
import { throwIfInterrupted } from "./interrupted.js";

/** Makes received messages visible again at once, so nothing is hidden after we are done. */
export async function release(sqs: SQSClient, url: string, receipts: readonly string[]): Promise<void> {
  for (let i = 0; i < receipts.length; i += 10) {
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: url,
        Entries: receipts
          .slice(i, i + 10)
          .map((receipt, j) => ({ Id: String(j), ReceiptHandle: receipt, VisibilityTimeout: 0 })),
      }),
    );
  }
}

/**
 * How long a received message stays hidden while the run holds it: long enough that what the run
 * leaves in the DLQ does not come back during the run, short enough that a crashed run hides nothing
 * for long. What is left is made visible again when the run ends.
 */
export const HOLD_SECONDS = 300;

export const RECEIVE: {
  MaxNumberOfMessages: number;
  WaitTimeSeconds: number;
  MessageAttributeNames: string[];
  MessageSystemAttributeNames: MessageSystemAttributeName[];
} = {
  MaxNumberOfMessages: 10,
  WaitTimeSeconds: 1,
  MessageAttributeNames: ["All"],
  MessageSystemAttributeNames: [
    "MessageGroupId",
    "MessageDeduplicationId",
    "SentTimestamp",
    "ApproximateReceiveCount",
  ],
};

/** A DLQ message as a person needs to see it, read without taking it out of the queue. */
export interface PeekedMessage {
  readonly messageId: string;
  readonly body: string;
  /** When it was sent to this queue (ms), SQS's SentTimestamp. */
  readonly sentAt: number;
  readonly receiveCount: number;
  /** `pipeline.reason.code`, or MAX_RECEIVES_REASON for a message SQS moved after its receives ran out. */
  readonly reason: string;
  readonly reasonMessage?: string;
  readonly kind: FailureKind;
  /** The FIFO message group. */
  readonly group?: string;
  readonly attributes: Readonly<Record<string, string>>;
}

export interface Peek {
  readonly messages: readonly PeekedMessage[];
  /**
   * False when the queue may hold more than was seen: a FIFO queue returns no later message of a group
   * while an earlier one is held (docs/aws-semantics.md §3), or `limit` was reached.
   */
  readonly complete: boolean;
}

function peeked(m: Message): PeekedMessage {
  const attributes: Record<string, string> = {};
  for (const [name, value] of Object.entries(m.MessageAttributes ?? {}))
    if (value.StringValue !== undefined) attributes[name] = value.StringValue;
  const reason = deadLetterReason(m.MessageAttributes ?? {});
  const reasonMessage = attributes[DeadLetterAttribute.ReasonMessage];
  const group = m.Attributes?.MessageGroupId;
  return {
    messageId: m.MessageId ?? "",
    body: m.Body ?? "",
    sentAt: Number(m.Attributes?.SentTimestamp ?? 0),
    receiveCount: Number(m.Attributes?.ApproximateReceiveCount ?? 0),
    reason,
    ...(reasonMessage !== undefined ? { reasonMessage } : {}),
    kind: deadLetterFailureKind(reason),
    ...(group !== undefined ? { group } : {}),
    attributes,
  };
}

/**
 * Reads the messages a queue holds without taking them: each is received and held invisible until the
 * read is done (so none is read twice), then every one is made visible again at once. For DLQs only: a
 * receive counts towards a source queue's maxReceiveCount. ApproximateNumberOfMessages lags, on AWS too;
 * this is what is there. An abort of `signal` stops the read between receives, makes what it held visible
 * again and throws an InterruptedError: a read cut short must neither pass for the whole queue nor hide
 * its messages for HOLD_SECONDS.
 */
export async function peekMessages(
  sqs: SQSClient,
  url: string,
  options: { readonly fifo?: boolean; readonly limit?: number; readonly signal?: AbortSignal } = {},
): Promise<Peek> {
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const seen = new Map<string, Message>();
  const receipts = new Map<string, string>();
  let full = false;
  try {
    for (;;) {
      if (options.signal?.aborted) break;
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: url, ...RECEIVE, VisibilityTimeout: HOLD_SECONDS }),
      );
      let fresh = 0;
      for (const m of Messages) {
        if (!m.MessageId) continue;
        if (m.ReceiptHandle) receipts.set(m.MessageId, m.ReceiptHandle);
        if (seen.has(m.MessageId)) continue;
        seen.set(m.MessageId, m);
        fresh += 1;
      }
      if (seen.size >= limit) {
        full = true;
        break;
      }
      if (fresh === 0) break;
    }
  } finally {
    await release(sqs, url, [...receipts.values()]);
  }
  throwIfInterrupted(options.signal);
  return {
    messages: [...seen.values()].slice(0, limit).map(peeked),
    complete: !full && options.fifo !== true,
  };
}

/**
 * Counts the messages a standard queue holds by reading them (peekMessages). Not for FIFO queues: a held
 * message hides the rest of its group, so only the first messages of each group would be counted.
 */
export async function countMessages(sqs: SQSClient, url: string, signal?: AbortSignal): Promise<number> {
  return (await peekMessages(sqs, url, signal ? { signal } : {})).messages.length;
}
