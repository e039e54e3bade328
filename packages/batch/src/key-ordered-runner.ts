import { FailureKind, failureKindOf } from "@mcp-pipeline/contracts";
import { type Deadline, NO_DEADLINE } from "./deadline.js";
import {
  type BatchOutcome,
  countOutcomes,
  type ItemOutcome,
  ItemStatus,
  NotStartedReason,
} from "./outcome.js";
import { type KeyLane, lanesOf, ReadyLanes, remaining } from "./ready-lanes.js";
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
  assertConcurrency(options.concurrency);
  return new KeyOrderedRun(options).run();
}

/** One run of runKeyOrdered: the lanes, what runs, and each record's outcome as it comes. */
class KeyOrderedRun<T> {
  readonly #options: RunOptions<T>;
  readonly #deadline: Deadline;
  readonly #classify: (error: unknown) => FailureKind;
  readonly #nowMs: () => number;
  readonly #outcomes: (ItemOutcome | undefined)[];
  readonly #ready = new ReadyLanes();
  readonly #runningLanes = new Set<KeyLane>();
  #running = 0;
  /** The slowest record seen so far in this batch, ms. */
  #slowestMs: number | undefined;
  #deadlineReached = false;
  /** Kinesis: the earliest batch index that failed transiently. */
  #stopAfter = Number.POSITIVE_INFINITY;
  #resolve: (outcome: BatchOutcome<T>) => void = () => {};

  constructor(options: RunOptions<T>) {
    this.#options = options;
    this.#deadline = options.deadline ?? NO_DEADLINE;
    this.#classify = options.classify ?? failureKindOf;
    this.#nowMs = this.#deadline.nowMs ?? (() => performance.now());
    this.#outcomes = new Array(options.items.length);
    for (const lane of lanesOf(options.items, options.keyOf)) this.#ready.push(lane);
  }

  run(): Promise<BatchOutcome<T>> {
    return new Promise((resolve) => {
      this.#resolve = resolve;
      this.#pump();
    });
  }

  /** Starts ready keys while there is room and time; finishes the run once nothing runs. */
  #pump(): void {
    while (this.#running < this.#options.concurrency && this.#ready.size > 0 && !this.#deadlineReached) {
      if (this.#deadline.reached()) {
        this.#deadlineReached = true;
        break;
      }
      const lane = this.#ready.pop(this.#currentRule()) as KeyLane;
      const index = lane.indices[lane.next] as number;
      if (index > this.#stopAfter) {
        // Indices of a lane ascend, so the rest of this lane lies after the failure too.
        this.#markRest(lane, lane.next, NotStartedReason.AfterFailure);
        continue;
      }
      this.#running += 1;
      this.#runningLanes.add(lane);
      const context: ItemContext = { index, key: lane.key };
      const startedAt = this.#nowMs();
      void this.#runOne(this.#options.items[index] as T, context).then((outcome) =>
        this.#settle(lane, index, outcome, this.#nowMs() - startedAt),
      );
    }
    if (this.#running === 0) this.#finish();
  }

  /** The rule for the next pick: fixed, or adaptive (schedule.ts) when the deadline tells its time. */
  #currentRule(): SchedulingRule {
    const fixed = this.#options.schedule ?? SchedulingRule.Adaptive;
    if (fixed !== SchedulingRule.Adaptive) return fixed;
    const timeLeftMs = this.#deadline.timeLeftMs?.();
    const recordMs = this.#slowestMs ?? this.#deadline.expectedRecordMs;
    if (timeLeftMs === undefined || recordMs === undefined) return SchedulingRule.LongestKeyFirst;
    let pendingRecords = this.#ready.records;
    let longestChain = this.#ready.longest();
    for (const lane of this.#runningLanes) {
      pendingRecords += remaining(lane);
      longestChain = Math.max(longestChain, remaining(lane));
    }
    return adaptiveRule({
      timeLeftMs,
      recordMs,
      pendingRecords,
      longestChain,
      concurrency: this.#options.concurrency,
    });
  }

  /** A record's outcome: handled, set aside (permanent), or failed (transient, or not set aside). */
  async #runOne(item: T, context: ItemContext): Promise<ItemOutcome> {
    try {
      await this.#options.handle(item, context);
      return { status: ItemStatus.Succeeded };
    } catch (error) {
      if (this.#classify(error) !== FailureKind.Permanent) {
        return { status: ItemStatus.Failed, error, cause: "transient" };
      }
      try {
        await this.#options.setAside(item, error, context);
        return { status: ItemStatus.SetAside, error };
      } catch (sinkError) {
        return {
          status: ItemStatus.Failed,
          error: new AggregateError([error, sinkError], "permanent failure could not be set aside"),
          cause: "set-aside-failed",
        };
      }
    }
  }

  /** Records a finished record's outcome, stops what its failure stops, and starts what may start next. */
  #settle(lane: KeyLane, index: number, outcome: ItemOutcome, tookMs: number): void {
    this.#outcomes[index] = outcome;
    this.#slowestMs = Math.max(this.#slowestMs ?? 0, tookMs);
    this.#running -= 1;
    this.#runningLanes.delete(lane);
    lane.next += 1;
    if (outcome.status === ItemStatus.Failed) {
      if (this.#options.failureScope === FailureScope.KeyAndLater) {
        this.#stopAfter = Math.min(this.#stopAfter, index);
        this.#markRest(lane, lane.next, NotStartedReason.AfterFailure);
      } else if (this.#options.failureScope === FailureScope.Key) {
        this.#markRest(lane, lane.next, NotStartedReason.KeyStopped);
      }
    }
    if (lane.next < lane.indices.length) this.#ready.push(lane);
    this.#pump();
  }

  #markRest(lane: KeyLane, from: number, reason: NotStartedReason): void {
    for (let i = from; i < lane.indices.length; i++) {
      const index = lane.indices[i] as number;
      this.#outcomes[index] ??= { status: ItemStatus.NotStarted, reason };
    }
    lane.next = lane.indices.length;
  }

  /** Every record without an outcome did not start: the deadline came, or a failure stopped it. */
  #finish(): void {
    for (const lane of this.#ready.drain()) {
      this.#markRest(
        lane,
        lane.next,
        this.#deadlineReached ? NotStartedReason.Deadline : NotStartedReason.AfterFailure,
      );
    }
    const final = this.#outcomes.map(
      (o) => o ?? { status: ItemStatus.NotStarted, reason: NotStartedReason.Deadline },
    ) as ItemOutcome[];
    this.#resolve({
      items: this.#options.items,
      outcomes: final,
      counts: countOutcomes(final),
      deadlineReached: this.#deadlineReached,
    });
  }
}
