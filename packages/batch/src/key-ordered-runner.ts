import { FailureKind, failureKindOf } from "@mcp-pipeline/contracts";
import { type Deadline, NO_DEADLINE } from "./deadline.js";
import {
  type BatchOutcome,
  countOutcomes,
  type ItemOutcome,
  ItemStatus,
  NotStartedReason,
} from "./outcome.js";
import { PriorityQueue } from "./priority-queue.js";

/** What a transient failure stops besides the failed record itself. */
export const FailureScope = {
  /** SQS standard: nothing else; every message stands alone. */
  Item: "item",
  /** SQS FIFO: the rest of the record's group (esm-semantics.md §3 "Partial failure guidance"). */
  Key: "key",
  /**
   * Kinesis: the rest of the key and every record after it in the shard, because Lambda checkpoints
   * at the lowest reported sequence number and redelivers everything after it (§1.4 "Checkpoint rule").
   */
  KeyAndLater: "key-and-later",
} as const;
export type FailureScope = (typeof FailureScope)[keyof typeof FailureScope];

export interface ItemContext {
  /** Position of the record in the batch (its order in the shard or queue receive). */
  readonly index: number;
  /** The ordering key: partition key, message group, or the message id for standard queues. */
  readonly key: string;
}

export type ItemHandler<T> = (item: T, context: ItemContext) => Promise<void>;
/** Takes a record that failed permanently (quarantine, DLQ, failed result). Throwing keeps it in the source. */
export type SetAside<T> = (item: T, error: unknown, context: ItemContext) => Promise<void>;

export interface RunOptions<T> {
  readonly items: readonly T[];
  readonly keyOf: (item: T, index: number) => string;
  readonly handle: ItemHandler<T>;
  readonly setAside: SetAside<T>;
  /** How many keys run at once. Records of one key never overlap. */
  readonly concurrency: number;
  readonly failureScope: FailureScope;
  readonly deadline?: Deadline;
  /** Overrides how errors are classified; the default reads the error's `kind` (contracts `failureKindOf`). */
  readonly classify?: (error: unknown) => FailureKind;
}

interface KeyLane {
  readonly key: string;
  /** Batch indices of this key's records, ascending. */
  readonly indices: number[];
  next: number;
}

function remaining(lane: KeyLane): number {
  return lane.indices.length - lane.next;
}

/**
 * Which ready key to run next: the one with the most records left (its chain is the critical path;
 * for equal per-record latency this is Hu's list-scheduling rule, optimal for chains), ties broken by
 * the earliest record so that work near the front of the shard finishes first.
 */
function runsBefore(a: KeyLane, b: KeyLane): boolean {
  const ra = remaining(a);
  const rb = remaining(b);
  if (ra !== rb) return ra > rb;
  return (a.indices[a.next] ?? 0) < (b.indices[b.next] ?? 0);
}

export function assertConcurrency(concurrency: number): void {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be an integer >= 1, got ${concurrency}`);
  }
}

/**
 * Runs a batch with at most `concurrency` keys at once and each key's records strictly in order.
 *
 * Guarantees, whatever the handlers do:
 * - every record gets exactly one outcome, and the promise never rejects because a handler failed;
 * - a record is started only after every earlier record of its key succeeded or was set aside;
 * - with `KeyAndLater`, no record after the earliest transient failure is started once that failure
 *   is known, and every record before it is run to an outcome (unless the deadline stops it);
 * - once the deadline is reached nothing new starts; records in flight finish.
 */
export function runKeyOrdered<T>(options: RunOptions<T>): Promise<BatchOutcome<T>> {
  const { items, handle, setAside, failureScope } = options;
  assertConcurrency(options.concurrency);
  const deadline = options.deadline ?? NO_DEADLINE;
  const classify = options.classify ?? failureKindOf;

  const outcomes: (ItemOutcome | undefined)[] = new Array(items.length);
  const lanes = new Map<string, KeyLane>();
  items.forEach((item, index) => {
    const key = options.keyOf(item, index);
    const lane = lanes.get(key);
    if (lane) lane.indices.push(index);
    else lanes.set(key, { key, indices: [index], next: 0 });
  });

  const ready = new PriorityQueue<KeyLane>(runsBefore);
  for (const lane of lanes.values()) ready.push(lane);

  let running = 0;
  let deadlineReached = false;
  /** Kinesis: the earliest batch index that failed transiently. */
  let stopAfter = Number.POSITIVE_INFINITY;

  const markRest = (lane: KeyLane, from: number, reason: NotStartedReason): void => {
    for (let i = from; i < lane.indices.length; i++) {
      const index = lane.indices[i] as number;
      outcomes[index] ??= { status: ItemStatus.NotStarted, reason };
    }
    lane.next = lane.indices.length;
  };

  const runOne = async (item: T, context: ItemContext): Promise<ItemOutcome> => {
    try {
      await handle(item, context);
      return { status: ItemStatus.Succeeded };
    } catch (error) {
      if (classify(error) !== FailureKind.Permanent) {
        return { status: ItemStatus.Failed, error, cause: "transient" };
      }
      try {
        await setAside(item, error, context);
        return { status: ItemStatus.SetAside, error };
      } catch (sinkError) {
        return {
          status: ItemStatus.Failed,
          error: new AggregateError([error, sinkError], "permanent failure could not be set aside"),
          cause: "set-aside-failed",
        };
      }
    }
  };

  return new Promise((resolve) => {
    const finish = (): void => {
      for (const lane of ready.drain()) {
        markRest(
          lane,
          lane.next,
          deadlineReached ? NotStartedReason.Deadline : NotStartedReason.AfterFailure,
        );
      }
      const final = outcomes.map(
        (o) => o ?? { status: ItemStatus.NotStarted, reason: NotStartedReason.Deadline },
      ) as ItemOutcome[];
      resolve({ items, outcomes: final, counts: countOutcomes(final), deadlineReached });
    };

    const settle = (lane: KeyLane, index: number, outcome: ItemOutcome): void => {
      outcomes[index] = outcome;
      running -= 1;
      lane.next += 1;
      if (outcome.status === ItemStatus.Failed) {
        if (failureScope === FailureScope.KeyAndLater) {
          stopAfter = Math.min(stopAfter, index);
          markRest(lane, lane.next, NotStartedReason.AfterFailure);
        } else if (failureScope === FailureScope.Key) {
          markRest(lane, lane.next, NotStartedReason.KeyStopped);
        }
      }
      if (lane.next < lane.indices.length) ready.push(lane);
      pump();
    };

    const pump = (): void => {
      while (running < options.concurrency && ready.size > 0 && !deadlineReached) {
        if (deadline.reached()) {
          deadlineReached = true;
          break;
        }
        const lane = ready.pop() as KeyLane;
        const index = lane.indices[lane.next] as number;
        if (index > stopAfter) {
          // Indices of a lane ascend, so the rest of this lane lies after the failure too.
          markRest(lane, lane.next, NotStartedReason.AfterFailure);
          continue;
        }
        running += 1;
        const context: ItemContext = { index, key: lane.key };
        void runOne(items[index] as T, context).then((outcome) => settle(lane, index, outcome));
      }
      if (running === 0) finish();
    };

    pump();
  });
}
