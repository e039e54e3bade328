import { messageGroupIdOf, receiveCountOf } from "@mcp-pipeline/contracts";
import { backoffDelayMs, Jitter } from "@mcp-pipeline/retry";
import type { SQSRecord } from "aws-lambda";
import type { QueueMode } from "./queue-mode.js";

/**
 * How soon a job reported for retry comes back. Without it SQS shows a failed message again only when
 * the queue's visibility timeout ends (docs/aws-semantics.md §2.3): 180 s for a one-second blip. With
 * it the worker sets the message's visibility (ChangeMessageVisibility, which counts from the call and
 * shortens it as well as lengthens, §2.6) to a capped exponential backoff with full jitter.
 */
export interface RedeliveryBackoff {
  /** The ceiling of the first retry's wait (after the first receive); it doubles with each receive. */
  readonly baseMs: number;
  /** The ceiling never grows past this; the settings hold it to the queue's visibility timeout. */
  readonly capMs: number;
  /** The queue's maxReceiveCount: a message received that many times leaves for the DLQ (§2.3). */
  readonly maxReceiveCount?: number;
}

/** One message's new visibility timeout, in whole seconds as SQS takes it. */
export interface VisibilityChange {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly visibilityTimeoutSeconds: number;
}

/** The receive count of a record (ApproximateReceiveCount, §2.4); 1 when absent or malformed. */
export function attemptOf(record: SQSRecord): number {
  return receiveCountOf(record) ?? 1;
}

/**
 * The visibility timeout of a message received `attempt` times: a uniform draw from 0 to
 * min(capMs, baseMs x 2^(attempt - 1)), in whole seconds. `random` returns [0, 1), as Math.random.
 */
export function backoffSeconds(attempt: number, backoff: RedeliveryBackoff, random: () => number): number {
  const ms = backoffDelayMs(
    attempt,
    { baseMs: backoff.baseMs, capMs: backoff.capMs, jitter: Jitter.Full },
    random,
  );
  // Full jitter gives less than the ceiling, so rounding never passes the cap's whole seconds.
  return Math.min(Math.round(ms / 1000), Math.floor(backoff.capMs / 1000));
}

const atLastReceive = (record: SQSRecord, backoff: RedeliveryBackoff): boolean =>
  backoff.maxReceiveCount !== undefined && attemptOf(record) >= backoff.maxReceiveCount;

/**
 * The visibility changes for the messages reported for retry (`reported`: their records, in batch
 * order, each with a messageId and a receipt handle). Pure: the random draws are the caller's.
 *
 * - Standard queue: each message by its own receive count. A message at its last receive gets none: it
 *   leaves for the DLQ whenever it shows again (§2.3).
 * - FIFO queue: a group's reported messages are its first failure and everything after it (§3). Every
 *   in-flight message of a group holds the group back, so they all get the same timeout, drawn from the
 *   receive count of the group's first reported message, and SQS hands them out again in their order
 *   (§3, §2.6): no later message can overtake. If that first message is at its last receive the group gets
 *   none, so the backoff never hurries a group towards the DLQ.
 */
export function planVisibilityChanges(
  reported: readonly SQSRecord[],
  mode: QueueMode,
  backoff: RedeliveryBackoff,
  random: () => number,
): VisibilityChange[] {
  const change = (record: SQSRecord, seconds: number): VisibilityChange => ({
    messageId: record.messageId,
    receiptHandle: record.receiptHandle,
    visibilityTimeoutSeconds: seconds,
  });
  if (mode === "standard")
    return reported
      .filter((record) => !atLastReceive(record, backoff))
      .map((record) => change(record, backoffSeconds(attemptOf(record), backoff, random)));
  const groups = new Map<string, SQSRecord[]>();
  for (const record of reported) {
    // As the batch engine keys a FIFO record: by its group, or alone when it has none.
    const group = messageGroupIdOf(record) ?? `message:${record.messageId}`;
    groups.set(group, [...(groups.get(group) ?? []), record]);
  }
  return [...groups.values()].flatMap((members) => {
    const head = members[0] as SQSRecord;
    if (atLastReceive(head, backoff)) return [];
    const seconds = backoffSeconds(attemptOf(head), backoff, random);
    return members.map((record) => change(record, seconds));
  });
}
