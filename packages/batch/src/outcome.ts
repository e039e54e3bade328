import { failureCodeOf, messageOf } from "@mcp-pipeline/contracts";

/** What happened to one record of a batch. Data, not control flow: the response is derived from it. */
export const ItemStatus = {
  /** Handled. */
  Succeeded: "succeeded",
  /** Failed permanently, handed to the permanent-failure sink (quarantine, DLQ, failed result) and acknowledged. */
  SetAside: "set-aside",
  /** Failed in a way a retry may fix, or could not be set aside: reported so the event source retries it. */
  Failed: "failed",
  /** Never started: reported so the event source delivers it again. */
  NotStarted: "not-started",
} as const;
export type ItemStatus = (typeof ItemStatus)[keyof typeof ItemStatus];

export const NotStartedReason = {
  /** The invocation's remaining time fell below the margin. */
  Deadline: "deadline",
  /** An earlier record of the same key (partition key, message group) failed. */
  KeyStopped: "key-stopped",
  /** Kinesis: a record earlier in the shard failed; Lambda redelivers from that record on. */
  AfterFailure: "after-failure",
} as const;
export type NotStartedReason = (typeof NotStartedReason)[keyof typeof NotStartedReason];

export type ItemOutcome =
  | { readonly status: typeof ItemStatus.Succeeded }
  | { readonly status: typeof ItemStatus.SetAside; readonly error: unknown }
  | {
      readonly status: typeof ItemStatus.Failed;
      readonly error: unknown;
      /** `set-aside-failed`: the record failed permanently but the sink could not take it. */
      readonly cause: "transient" | "set-aside-failed";
    }
  | { readonly status: typeof ItemStatus.NotStarted; readonly reason: NotStartedReason };

export interface BatchOutcome<T> {
  readonly items: readonly T[];
  /** `outcomes[i]` belongs to `items[i]`. */
  readonly outcomes: readonly ItemOutcome[];
  readonly counts: Readonly<Record<ItemStatus, number>>;
  /** True when the deadline stopped the batch early. */
  readonly deadlineReached: boolean;
}

export function countOutcomes(outcomes: readonly ItemOutcome[]): Record<ItemStatus, number> {
  const counts: Record<ItemStatus, number> = { succeeded: 0, "set-aside": 0, failed: 0, "not-started": 0 };
  for (const outcome of outcomes) counts[outcome.status] += 1;
  return counts;
}

/** Whether the event source must deliver the record again. */
export function needsRedelivery(outcome: ItemOutcome): boolean {
  return outcome.status === ItemStatus.Failed || outcome.status === ItemStatus.NotStarted;
}

/**
 * One log entry per record that failed, identified by `identify` (sequence number, messageId...).
 * Not-started records are summarised by the counts, not listed. The failure's text is `error`, not
 * `message`: Powertools' logger reserves `message` for the log line and drops an attribute of that name.
 */
export function failureDetails<T>(
  outcome: BatchOutcome<T>,
  identify: (item: T) => Record<string, unknown>,
): Record<string, unknown>[] {
  return outcome.outcomes.flatMap((o, i) => {
    const item = outcome.items[i];
    if (o.status !== ItemStatus.Failed || item === undefined) return [];
    return [{ ...identify(item), cause: o.cause, code: failureCodeOf(o.error), error: messageOf(o.error) }];
  });
}

/**
 * Kinesis checkpoint progress: how many records, from the start of the batch (shard order), are done
 * before the first one that needs redelivery. Lambda checkpoints there (§1.4), so this is the work an
 * invocation keeps; everything after it is delivered again, including records that already ran.
 */
export function checkpointProgress<T>(outcome: BatchOutcome<T>): number {
  const first = outcome.outcomes.findIndex(needsRedelivery);
  return first === -1 ? outcome.outcomes.length : first;
}
