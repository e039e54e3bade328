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
import { adaptiveRule, SchedulingRule } from "./schedule.js";

/** What a transient failure stops besides the failed record itself. */
export const FailureScope = {
  /** SQS standard: nothing else; every message stands alone. */
  Item: "item",
  /** SQS FIFO: the rest of the record's group (docs/aws-semantics.md §3 "Partial failure guidance"). */
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
  /** Which ready key starts next (schedule.ts); `adaptive` by default. */
  readonly schedule?: SchedulingRule;
}

interface KeyLane {
  readonly key: string;
  /** Batch indices of this key's records, ascending. */
  readonly indices: number[];
  next: number;
  /** Whether the lane waits in the ready set, and which of its heap entries is current. */
  queued: boolean;
  ticket: number;
}

function remaining(lane: KeyLane): number {
  return lane.indices.length - lane.next;
}

const nextIndex = (lane: KeyLane): number => lane.indices[lane.next] ?? 0;

/**
 * Longest key first: the one with the most records left (its chain is the critical path; for equal
 * per-record latency this is Hu's list-scheduling rule, optimal for chains), ties broken by the
 * earliest record so that work near the front of the shard finishes first.
 */
function longestFirst(a: KeyLane, b: KeyLane): boolean {
  const ra = remaining(a);
  const rb = remaining(b);
  if (ra !== rb) return ra > rb;
  return nextIndex(a) < nextIndex(b);
}

interface Entry {
  readonly lane: KeyLane;
  readonly ticket: number;
}

/**
 * The keys ready to start, ordered both ways at once (one heap per rule, O(log K) per step), so the
 * rule can change between two picks. A lane's sort keys do not change while it waits; entries left in
 * the other heap when a lane is taken are skipped later by their ticket.
 */
class ReadyLanes {
  readonly #byLength = new PriorityQueue<Entry>((a, b) => longestFirst(a.lane, b.lane));
  readonly #byIndex = new PriorityQueue<Entry>((a, b) => nextIndex(a.lane) < nextIndex(b.lane));
  size = 0;
  /** Records of the waiting lanes. */
  records = 0;

  push(lane: KeyLane): void {
    lane.ticket += 1;
    lane.queued = true;
    const entry = { lane, ticket: lane.ticket };
    this.#byLength.push(entry);
    this.#byIndex.push(entry);
    this.size += 1;
    this.records += remaining(lane);
  }

  pop(rule: SchedulingRule): KeyLane | undefined {
    const heap = rule === SchedulingRule.EarliestRecordFirst ? this.#byIndex : this.#byLength;
    for (let entry = heap.pop(); entry !== undefined; entry = heap.pop()) {
      if (!entry.lane.queued || entry.ticket !== entry.lane.ticket) continue;
      entry.lane.queued = false;
      this.size -= 1;
      this.records -= remaining(entry.lane);
      return entry.lane;
    }
    return undefined;
  }

  /** The most records left on one waiting key. */
  longest(): number {
    for (let top = this.#byLength.peek(); top !== undefined; top = this.#byLength.peek()) {
      if (top.lane.queued && top.ticket === top.lane.ticket) return remaining(top.lane);
      this.#byLength.pop();
    }
    return 0;
  }

  drain(): KeyLane[] {
    const lanes = this.#byLength
      .drain()
      .flatMap((e) => (e.lane.queued && e.ticket === e.lane.ticket ? [e.lane] : []));
    this.#byIndex.drain();
    for (const lane of lanes) lane.queued = false;
    this.size = 0;
    this.records = 0;
    return lanes;
  }
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
    else lanes.set(key, { key, indices: [index], next: 0, queued: false, ticket: 0 });
  });

  const ready = new ReadyLanes();
  for (const lane of lanes.values()) ready.push(lane);

  let running = 0;
  const runningLanes = new Set<KeyLane>();
  const nowMs = deadline.nowMs ?? (() => performance.now());
  /** The slowest record seen so far in this batch, ms. */
  let slowestMs: number | undefined;

  /** The rule for the next pick: fixed, or adaptive (schedule.ts) when the deadline tells its time. */
  const currentRule = (): SchedulingRule => {
    const fixed = options.schedule ?? SchedulingRule.Adaptive;
    if (fixed !== SchedulingRule.Adaptive) return fixed;
    const timeLeftMs = deadline.timeLeftMs?.();
    const recordMs = slowestMs ?? deadline.expectedRecordMs;
    if (timeLeftMs === undefined || recordMs === undefined) return SchedulingRule.LongestKeyFirst;
    let pendingRecords = ready.records;
    let longestChain = ready.longest();
    for (const lane of runningLanes) {
      pendingRecords += remaining(lane);
      longestChain = Math.max(longestChain, remaining(lane));
    }
    return adaptiveRule({
      timeLeftMs,
      recordMs,
      pendingRecords,
      longestChain,
      concurrency: options.concurrency,
    });
  };
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

    const settle = (lane: KeyLane, index: number, outcome: ItemOutcome, tookMs: number): void => {
      outcomes[index] = outcome;
      slowestMs = Math.max(slowestMs ?? 0, tookMs);
      running -= 1;
      runningLanes.delete(lane);
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
        const lane = ready.pop(currentRule()) as KeyLane;
        const index = lane.indices[lane.next] as number;
        if (index > stopAfter) {
          // Indices of a lane ascend, so the rest of this lane lies after the failure too.
          markRest(lane, lane.next, NotStartedReason.AfterFailure);
          continue;
        }
        running += 1;
        runningLanes.add(lane);
        const context: ItemContext = { index, key: lane.key };
        const startedAt = nowMs();
        void runOne(items[index] as T, context).then((outcome) =>
          settle(lane, index, outcome, nowMs() - startedAt),
        );
      }
      if (running === 0) finish();
    };

    pump();
  });
}
