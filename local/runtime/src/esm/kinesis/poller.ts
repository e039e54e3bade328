import { randomUUID } from "node:crypto";
import {
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type KinesisClient,
  type ShardIteratorType,
} from "@aws-sdk/client-kinesis";
import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { compareSequenceNumbers } from "@mcp-pipeline/aws";
import { listShards } from "@mcp-pipeline/aws/kinesis-client";
import { backoffDelayMs, retry, sleep } from "@mcp-pipeline/retry";
import type { KinesisStreamRecord } from "aws-lambda";
import { readBatchResponse } from "../batch-response.js";
import { RequestAbandonedError, sendWithin } from "../bounded-request.js";
import type { Invokable } from "../invokable.js";
import type { InvokeResult } from "../lambda/local-function.js";
import {
  eventRecordBytes,
  kinesisEventRecord,
  MAX_PAYLOAD_BYTES,
  type ShardRecord,
  type StreamIdentity,
  shardRecordOf,
} from "./event.js";
import { FailureCondition, failureRecord, type KinesisFailureRecord } from "./failure-record.js";
import { PartialSplitAccounting, partialSplitAccountingOf } from "./partial-split-accounting.js";

/**
 * The mapping's parameters as the event source runs them: durations in ms, named with their unit. The
 * environment's settings (packages/settings' KinesisEsmSettings: terraform.tfvars.json, seconds) are
 * converted to these by whoever starts the event source.
 */
export interface KinesisEsmParameters {
  readonly batchSize: number;
  readonly batchingWindowMs: number;
  readonly parallelizationFactor: number;
  readonly startingPosition: "TRIM_HORIZON" | "LATEST";
  /** -1: infinite. */
  readonly maximumRetryAttempts: number;
  /** -1: infinite. */
  readonly maximumRecordAgeMs: number;
  readonly bisectBatchOnFunctionError: boolean;
  readonly reportBatchItemFailures: boolean;
}

export interface KinesisEsmOptions {
  readonly kinesis: KinesisClient;
  readonly streamName: string;
  readonly stream: StreamIdentity;
  readonly function: Invokable;
  readonly parameters: KinesisEsmParameters;
  /** The on-failure destination (an SQS standard queue), and the client to reach it. */
  readonly onFailure?: { readonly sqs: SQSClient; readonly queueUrl: string };
  /** Idle poll interval per shard; Lambda polls once a second (§1.1). */
  readonly pollIntervalMs?: number;
  /** How often shards are listed, to find children after resharding. */
  readonly shardRefreshMs?: number;
  /** Wait before retrying a failed batch; AWS's timing is undocumented (§9.3). */
  readonly retryDelayMs?: (attempt: number) => number;
  /**
   * Wait before retrying a failed read call (GetShardIterator, GetRecords). Lambda retries these
   * "before invocation" errors without limit and without counting them as attempts (§1.3); the default
   * backs off exponentially to a cap of 5 s.
   */
  readonly readRetryDelayMs?: (attempt: number) => number;
  /**
   * How long one request of the mapping (GetShardIterator, GetRecords, ListShards, a SendMessage to the
   * on-failure destination) may go unanswered: then it is aborted and retried as a failed call (§9.1
   * item 13). Default 30 s.
   */
  readonly requestBoundMs?: number;
  /**
   * How long the mapping keeps trying to deliver a failure record to the on-failure destination before
   * it drops the record's batch (counted in `destinationDeliveryFailures`, reported as
   * `destination-failed`; §1.6, §6). Default 60 s: an SQS endpoint that restarts is back within that.
   */
  readonly destinationRetrySpanMs?: number;
  /**
   * With bisect and ReportBatchItemFailures on, whether a partial answer's split uses an attempt (see
   * PartialSplitAccounting). Default "split-free", AWS's documented wording; ignored with bisect off.
   */
  readonly partialSplitAccounting?: PartialSplitAccounting;
  readonly now?: () => number;
  readonly onEvent?: (event: KinesisEsmEvent) => void;
}

export type KinesisEsmEvent =
  | {
      readonly type: "invoked";
      readonly shardId: string;
      readonly records: number;
      readonly outcome: string;
      /** The oldest record's age when the batch was invoked: the shard's iterator age at that moment. */
      readonly iteratorAgeMs: number;
    }
  | { readonly type: "bisected"; readonly shardId: string; readonly records: number }
  /**
   * With bisect on, a partial answer split the batch at the failed record (§1.4): the records before it are
   * done, `retried` are invoked again; `attemptUsed` says whether the split used an attempt
   * (PartialSplitAccounting).
   */
  | {
      readonly type: "partial-split";
      readonly shardId: string;
      readonly records: number;
      readonly retried: number;
      readonly attemptUsed: boolean;
    }
  | { readonly type: "discarded"; readonly record: KinesisFailureRecord }
  /**
   * The failure record of a discarded batch could not be delivered within the retry span: its records
   * are dropped, as AWS drops them (DroppedEventCount, DestinationDeliveryFailures; §6).
   */
  | { readonly type: "destination-failed"; readonly record: KinesisFailureRecord; readonly errorName: string }
  | { readonly type: "shard-finished"; readonly shardId: string }
  /**
   * A GetRecords answered: when it was sent and answered (the mapping's clock), the records it returned
   * and how many records then waited in the shard's lanes (read, not yet in a batch). With `round`, what a
   * reader needs to see where a shard's time goes: reading, invoking, or waiting (the poll interval, the
   * batching window, room in the lanes). Reads go on while the lanes invoke.
   */
  | {
      readonly type: "read";
      readonly shardId: string;
      readonly askedAt: number;
      readonly answeredAt: number;
      readonly records: number;
      readonly buffered: number;
    }
  /**
   * A span the shard's lanes were invoking, from a lane taking a batch while none was busy to no lane being
   * busy again: the lanes' batches side by side; `records` is how many they took in it. The reader reads
   * during it (before the reader ran beside the lanes, a round was one dispatch of what a read had
   * brought, and no read came during it).
   */
  | {
      readonly type: "round";
      readonly shardId: string;
      readonly from: number;
      readonly at: number;
      readonly records: number;
    }
  /** A read call failed and will be retried (§1.3 "Before invocation"); `attempt` counts consecutive failures. */
  | {
      readonly type: "read-error";
      readonly shardId: string;
      readonly operation: "GetShardIterator" | "GetRecords";
      readonly errorName: string;
      readonly attempt: number;
    }
  /** A request got no answer within the bound and was aborted; it is retried (§9.1 item 13). */
  | {
      readonly type: "request-abandoned";
      readonly operation: KinesisEsmOperation;
      /** The shard the request was for; undefined for ListShards. */
      readonly shardId: string | undefined;
      readonly boundMs: number;
    };

/** The requests the mapping itself sends. */
export type KinesisEsmOperation = "GetShardIterator" | "GetRecords" | "ListShards" | "SendMessage";

export interface KinesisEsmStats {
  polledRecords: number;
  invocations: number;
  invokedRecords: number;
  functionErrors: number;
  partialFailures: number;
  invalidResponses: number;
  /** Batches invoked again after a failed attempt (each used one of MaximumRetryAttempts). */
  retriedBatches: number;
  /** Batches split in halves after a function error (bisect on). */
  bisections: number;
  /** Batches split at the failed record of a partial answer (bisect on, §1.4). */
  partialSplits: number;
  /** Records sent to the on-failure destination (DroppedEventCount when there is none). */
  discardedRecords: number;
  onFailureDelivered: number;
  /** Messages sent to the on-failure destination (one per discarded batch). */
  onFailureMessages: number;
  destinationDeliveryFailures: number;
  maxIteratorAgeMs: number;
  /** Failed GetShardIterator and GetRecords calls (throttles, service errors), each retried. */
  readErrors: number;
  /** GetRecords answers of ExpiredIteratorException, each followed by a new iterator. */
  expiredIterators: number;
  /** Requests aborted for want of an answer within the bound, each retried (§9.1 item 13). */
  abandonedRequests: number;
}

/**
 * How a batch left the mapping's hands: done (processed, or given up with its failure record delivered
 * or dropped), or stopped before its failure record reached the destination (not done).
 */
const Handed = { Done: "done", Stopped: "stopped" } as const;
type Handed = (typeof Handed)[keyof typeof Handed];

/** A lane's records read and not yet in a batch, in shard order (§1.2). */
interface LaneQueue {
  readonly records: ShardRecord[];
  /** When its batching window opened: its first record waiting was read, or a batch left it a tail. */
  windowFrom: number;
  /** `run.reads` when the lane last took a batch: a short tail waits for a read answered after that. */
  readsAtTake: number;
}

/**
 * A shard while its reader and its lanes run side by side: where it reads, what waits in each lane, what
 * is read and not yet passed by the checkpoint, and how reading went.
 */
interface ShardRun {
  readonly shardId: string;
  iterator: string;
  /** The last record read from the shard: a renewed iterator starts after it, not after the checkpoint. */
  lastRead: string | undefined;
  /** The shard has no next iterator: read to its end. */
  closed: boolean;
  /** The reader is done (the shard closed, or the mapping stopped): no record will be added. */
  readerDone: boolean;
  /** The reader waits for room in the lanes (the bound): no read comes until a lane takes a batch. */
  readerWaiting: boolean;
  readFailures: number;
  /** GetRecords calls answered (with records or without). */
  reads: number;
  readonly lanes: LaneQueue[];
  /** Records and data bytes waiting in the lanes, and when the first of them was read. */
  waiting: number;
  waitingBytes: number;
  firstWaitingAt: number;
  /** Records read, in shard order, from `head` on: those the checkpoint has not passed. */
  readonly inShardOrder: ShardRecord[];
  head: number;
  /** The data bytes of the records from `head` on: what the reader holds until the checkpoint passes it. */
  pastCheckpointBytes: number;
  /** Records read and not done (waiting in a lane, or in a batch not yet done). */
  readonly open: Set<ShardRecord>;
  /** Lanes invoking a batch now, and the span they have been busy (a `round`) with what it took. */
  busyLanes: number;
  busyFrom: number;
  busyRecords: number;
  /** When the last GetRecords was sent, if it found nothing: see `caughtUpSince`. */
  emptyAskedAt: number | undefined;
  /** A batch was left not done by a stop (its failure record undelivered): no lane takes another. */
  interrupted: boolean;
  /** Wakes whoever waits on the run (the reader for room, lanes for records or a read). */
  changed: Signal;
}

/** A wake-up for whoever waits on it; a wait that began after `notify` waits for the next one. */
class Signal {
  #waiters: (() => void)[] = [];
  wait(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
  notify(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

/** After a read: go on reading, or stop reading the shard (closed, or the mapping stopped). */
const ReadOutcome = { Read: "read", Again: "again", Ended: "ended" } as const;
type ReadOutcome = (typeof ReadOutcome)[keyof typeof ReadOutcome];

/**
 * What an invocation leaves of a batch: nothing (done, or handed over, or run as bisected halves), its
 * rest to invoke at once (a split that uses no retry), or the batch to retry (its functionError, if any,
 * for the failure record).
 */
type AfterInvoke =
  | { readonly next: "finished"; readonly handed: Handed }
  | { readonly next: "split"; readonly rest: ShardRecord[] }
  | { readonly next: "retry"; readonly rest: ShardRecord[]; readonly functionError: "Unhandled" | null };

/** Waits after a failed read call: 100, 200, 400 ... ms, at most 5 s. */
export const READ_BACKOFF = { baseMs: 100, capMs: 5_000 } as const;
/** Waits before a failed batch is invoked again: 100 ms doubling to 5 s (AWS's timing is not documented). */
export const BATCH_BACKOFF = { baseMs: 100, capMs: 5_000 } as const;
/** Waits between the tries to deliver a failure record to the on-failure destination. */
const DESTINATION_BACKOFF = { baseMs: 200, capMs: 5_000 } as const;
/**
 * How long those tries go on. AWS does not document its span; ours outlasts an emulator restart on a
 * loaded machine (the chaos run's SQS restart took up to 6.6 s), which five tries (~3 s) did not.
 */
const DESTINATION_RETRY_SPAN_MS = 60_000;
/**
 * How long a request may go unanswered. AWS answers these calls in well under a second; a loaded
 * machine's emulator takes seconds (the SDK's 5 s warning), not tens of seconds.
 */
const REQUEST_BOUND_MS = 30_000;

/**
 * Records asked for per GetRecords (§9.1 item 2): enough for a batch in every lane twice over, at least
 * 1,000, at most the 10,000 Kinesis allows. AWS does not say how many its pollers ask for [ours]. Asking
 * for 10,000 whatever the batch size made each read of a long backlog a large answer (several MB that the
 * emulator builds and the poller parses in one piece) of which one round of batches used 200 records and
 * the rest waited in the buffer, walked again by every round; on a busy machine such a read outlasted the
 * request bound and was abandoned and asked again (docs/benchmarks/ceiling.md).
 */
export function getRecordsLimit(parameters: {
  readonly batchSize: number;
  readonly parallelizationFactor: number;
}): number {
  return Math.min(
    10_000,
    Math.max(1_000, 2 * parameters.batchSize * Math.max(1, parameters.parallelizationFactor)),
  );
}

/**
 * The data a lane may hold waiting before the reader waits for room: two batches at the 6 MB payload limit
 * (§1.1), so that a lane of large records also finds its next batch read. [ours]
 */
const WAITING_BYTES_PER_LANE = 2 * MAX_PAYLOAD_BYTES;
/**
 * How many reads' worth of records (`getRecordsLimit`) may be read past the checkpoint. A lane retrying a
 * failed batch holds the checkpoint (§1.4, §1.2) while the other lanes go on; the records they finish are
 * kept until it passes them. Four reads' worth lets them go on through a few reads, then the reader waits
 * for the stuck lane. AWS does not say how far its pollers read ahead [ours].
 */
const READ_PAST_CHECKPOINT = 4;

/** A stable lane for a partition key, so one key's records always go through the same lane (§1.2). */
export function laneOf(partitionKey: string, lanes: number): number {
  let hash = 0;
  for (let i = 0; i < partitionKey.length; i++)
    hash = (Math.imul(hash, 31) + partitionKey.charCodeAt(i)) >>> 0;
  return hash % lanes;
}

/**
 * Lambda's Kinesis event source mapping, run locally (docs/aws-semantics.md §1, §9.1): one poller per
 * shard, batches by size, window and the 6 MB payload limit, in-order processing per shard (per
 * partition key with a parallelization factor), whole-batch retry, MaximumRetryAttempts,
 * MaximumRecordAgeInSeconds, BisectBatchOnFunctionError, ReportBatchItemFailures, the on-failure
 * destination record, checkpoints, and parent shards finished before their children.
 */
export class KinesisEventSource {
  readonly stats: KinesisEsmStats = {
    polledRecords: 0,
    invocations: 0,
    invokedRecords: 0,
    functionErrors: 0,
    partialFailures: 0,
    invalidResponses: 0,
    retriedBatches: 0,
    bisections: 0,
    partialSplits: 0,
    discardedRecords: 0,
    onFailureDelivered: 0,
    onFailureMessages: 0,
    destinationDeliveryFailures: 0,
    maxIteratorAgeMs: 0,
    readErrors: 0,
    expiredIterators: 0,
    abandonedRequests: 0,
  };
  /** The last sequence number of each shard below which every record is done (in memory). */
  readonly checkpoints = new Map<string, string>();
  readonly #options: KinesisEsmOptions;
  readonly #partialSplitAccounting: PartialSplitAccounting;
  readonly #now: () => number;
  readonly #started = new Set<string>();
  readonly #finished = new Set<string>();
  readonly #opened = new Set<string>();
  readonly #loops: Promise<void>[] = [];
  #running = false;
  /** Aborts the idle waits (shard listing, empty polls) at stop, so stopping does not wait them out. */
  #stopping = new AbortController();
  #discovery: Promise<void> | undefined;
  /**
   * Per shard, when the last GetRecords that found the shard empty was sent, with nothing buffered or
   * being invoked; absent while the shard has records in hand. See `caughtUpSince`.
   */
  readonly #emptySince = new Map<string, number>();
  /** A record's event form, built once: its size decides the batch, the same object is invoked. */
  readonly #eventForm = new WeakMap<ShardRecord, KinesisStreamRecord>();
  /** Its size in the event, measured once: a lane asks whether its batch is full at every change. */
  readonly #eventSize = new WeakMap<ShardRecord, number>();

  constructor(options: KinesisEsmOptions) {
    this.#partialSplitAccounting = partialSplitAccountingOf(options.partialSplitAccounting);
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#stopping = new AbortController();
    this.#discovery = this.#discover();
  }

  /**
   * Stops polling; invocations in flight finish first, and so does a try to deliver a failure record to
   * the destination, but it is not tried again: its batch is left not done, before the checkpoint
   * (§9.1 item 13).
   */
  async stop(): Promise<void> {
    this.#running = false;
    this.#stopping.abort();
    await this.#discovery;
    await Promise.all(this.#loops);
  }

  get finishedShards(): ReadonlySet<string> {
    return this.#finished;
  }

  /**
   * Shards this mapping holds an iterator for. With StartingPosition LATEST, a record put after a
   * shard is here is read and one put before is not (§1.1): callers wait on this, not on a timer.
   */
  get openedShards(): ReadonlySet<string> {
    return this.#opened;
  }

  /**
   * True when every shard this mapping reads has been polled, at or after `time`, and found empty with
   * nothing buffered or in an invocation: a record put into the stream before `time` has been read and
   * its batch is done. A caller that knows when the last producer finished asks this instead of waiting
   * for a quiet period.
   */
  caughtUpSince(time: number): boolean {
    if (this.#started.size === 0) return false;
    for (const shardId of this.#started) {
      if (this.#finished.has(shardId)) continue;
      const since = this.#emptySince.get(shardId);
      if (since === undefined || since < time) return false;
    }
    return true;
  }

  /** Waits `ms` unless the mapping stops first (then returns at once). */
  async #idle(ms: number): Promise<void> {
    await sleep(ms, this.#stopping.signal).catch(() => undefined);
  }

  async #discover(): Promise<void> {
    const { kinesis, streamName } = this.#options;
    while (this.#running) {
      try {
        const shards = await this.#send("ListShards", undefined, (abortSignal) =>
          listShards(kinesis, streamName, { abortSignal }),
        );
        const known = new Set(shards.map((s) => s.ShardId ?? ""));
        for (const shard of shards) {
          const id = shard.ShardId ?? "";
          if (this.#started.has(id)) continue;
          // A child waits until its parents (that still exist) are read to their end (§9.1, resharding).
          const parents = [shard.ParentShardId, shard.AdjacentParentShardId].filter(
            (p): p is string => p !== undefined && known.has(p),
          );
          if (!parents.every((p) => this.#finished.has(p))) continue;
          this.#started.add(id);
          const position: ShardIteratorType =
            parents.length > 0 ? "TRIM_HORIZON" : this.#options.parameters.startingPosition;
          this.#loops.push(this.#runShard(id, position));
        }
      } catch {
        // Listing shards failed (throttling, a restart): the next round tries again.
      }
      await this.#idle(this.#options.shardRefreshMs ?? 1_000);
    }
  }

  /**
   * A shard iterator that starts after `after` (the last record this poller read), else after the
   * checkpoint, else at `position`. Retried until it succeeds or the mapping stops (then undefined).
   */
  async #iterator(
    shardId: string,
    position: ShardIteratorType,
    after: string | undefined,
  ): Promise<string | undefined> {
    for (let attempt = 1; this.#running; attempt++) {
      const from = after ?? this.checkpoints.get(shardId);
      try {
        const { ShardIterator } = await this.#send("GetShardIterator", shardId, (abortSignal) =>
          this.#options.kinesis.send(
            new GetShardIteratorCommand({
              StreamName: this.#options.streamName,
              ShardId: shardId,
              ...(from
                ? { ShardIteratorType: "AFTER_SEQUENCE_NUMBER", StartingSequenceNumber: from }
                : { ShardIteratorType: position }),
            }),
            { abortSignal },
          ),
        );
        return ShardIterator;
      } catch (error) {
        await this.#readFailed(shardId, "GetShardIterator", error, attempt);
      }
    }
    return undefined;
  }

  /**
   * Sends one request of the mapping within the bound (§9.1 item 13). An abandoned request is counted
   * and reported here, then fails like any other call: the caller's retry takes over.
   */
  async #send<T>(
    operation: KinesisEsmOperation,
    shardId: string | undefined,
    send: (signal: AbortSignal) => Promise<T>,
    boundMs: number = this.#options.requestBoundMs ?? REQUEST_BOUND_MS,
  ): Promise<T> {
    try {
      return await sendWithin(operation, boundMs, send);
    } catch (error) {
      if (error instanceof RequestAbandonedError) {
        this.stats.abandonedRequests += 1;
        this.#options.onEvent?.({ type: "request-abandoned", operation, shardId, boundMs });
      }
      throw error;
    }
  }

  /** Reports a failed read call and waits before the next try (capped exponential backoff). */
  async #readFailed(
    shardId: string,
    operation: "GetShardIterator" | "GetRecords",
    error: unknown,
    attempt: number,
  ): Promise<void> {
    this.stats.readErrors += 1;
    const errorName = error instanceof Error ? error.name : typeof error;
    this.#options.onEvent?.({ type: "read-error", shardId, operation, errorName, attempt });
    await sleep(this.#options.readRetryDelayMs?.(attempt) ?? backoffDelayMs(attempt, READ_BACKOFF));
  }

  async #runShard(shardId: string, position: ShardIteratorType): Promise<void> {
    const iterator = await this.#iterator(shardId, position, undefined);
    if (iterator === undefined) return;
    this.#opened.add(shardId);
    const lanes = Math.max(1, this.#options.parameters.parallelizationFactor);
    const run: ShardRun = {
      shardId,
      iterator,
      lastRead: undefined,
      closed: false,
      readerDone: false,
      readerWaiting: false,
      readFailures: 0,
      reads: 0,
      lanes: Array.from({ length: lanes }, () => ({ records: [], windowFrom: 0, readsAtTake: 0 })),
      waiting: 0,
      waitingBytes: 0,
      firstWaitingAt: 0,
      inShardOrder: [],
      head: 0,
      pastCheckpointBytes: 0,
      open: new Set(),
      busyLanes: 0,
      busyFrom: 0,
      busyRecords: 0,
      emptyAskedAt: undefined,
      interrupted: false,
      changed: new Signal(),
    };
    // A stop wakes the reader and the lanes waiting on the run: they take nothing more.
    const stopping = this.#stopping.signal;
    const wake = () => run.changed.notify();
    stopping.addEventListener("abort", wake, { once: true });
    try {
      await Promise.all([
        this.#readShard(run, position),
        ...run.lanes.map((lane) => this.#runLane(run, lane)),
      ]);
    } finally {
      stopping.removeEventListener("abort", wake);
    }
    // Read to its end and every record done; a stop or a batch it left not done leaves the shard unfinished.
    if (run.closed && run.open.size === 0 && !run.interrupted) {
      this.#finished.add(shardId);
      this.#options.onEvent?.({ type: "shard-finished", shardId });
    }
  }

  /**
   * The shard's reader: reads on while the lanes invoke (§1.1 "keeps reading batches without pause while
   * the function is behind"), as long as the lanes have room (`#hasRoom`); else it waits for a lane to take
   * a batch, and never drops a record. Its cadence is a read's: at once after a read that brought records,
   * a poll interval after one that brought none, and within the batching window no faster than the poll
   * interval while no batch is full.
   */
  async #readShard(run: ShardRun, position: ShardIteratorType): Promise<void> {
    try {
      while (this.#running && !run.interrupted && !run.closed) {
        if (!this.#hasRoom(run)) {
          if (!run.readerWaiting) {
            run.readerWaiting = true;
            // A lane's short tail no longer waits for a read that waits for the lanes.
            run.changed.notify();
          }
          await run.changed.wait();
          continue;
        }
        run.readerWaiting = false;
        if ((await this.#read(run, position)) === ReadOutcome.Ended) break;
      }
    } finally {
      run.readerWaiting = false;
      run.readerDone = true;
      run.changed.notify();
    }
  }

  /**
   * Whether the reader may read again: while the records waiting in the lanes are fewer than one read asks
   * for (`getRecordsLimit`: at least two batches in every lane, so a lane that finishes a batch finds its
   * next one read), their data under WAITING_BYTES_PER_LANE a lane, and the records read past the checkpoint
   * (kept to move it, see `#done`) under READ_PAST_CHECKPOINT reads' worth and their data under the same
   * WAITING_BYTES_PER_LANE a lane: records other lanes have done stay held, data and all, while a lane
   * retrying a batch holds the checkpoint. A read adds at most its own answer (Kinesis: 10,000 records,
   * 10 MB) to what is held, so memory stays bounded when a lane is blocked.
   */
  #hasRoom(run: ShardRun): boolean {
    const limit = getRecordsLimit(this.#options.parameters);
    return (
      run.waiting < limit &&
      run.waitingBytes < WAITING_BYTES_PER_LANE * run.lanes.length &&
      run.inShardOrder.length - run.head < READ_PAST_CHECKPOINT * limit &&
      run.pastCheckpointBytes < WAITING_BYTES_PER_LANE * run.lanes.length
    );
  }

  /**
   * One GetRecords into the lanes, then the reader's pause: the poll interval after an empty read, the
   * batching window (at most a poll interval at a time) while it is open and no batch is full. Ended when
   * the shard is read to its end or the mapping stopped while renewing an expired iterator.
   */
  async #read(run: ShardRun, position: ShardIteratorType): Promise<ReadOutcome> {
    const { parameters } = this.#options;
    const { shardId } = run;
    const pollIntervalMs = this.#options.pollIntervalMs ?? 1_000;
    let page: GetRecordsCommandOutput;
    const askedAt = this.#now();
    try {
      const current = run.iterator;
      page = await this.#send("GetRecords", shardId, (abortSignal) =>
        this.#options.kinesis.send(
          new GetRecordsCommand({ ShardIterator: current, Limit: getRecordsLimit(parameters) }),
          { abortSignal },
        ),
      );
    } catch (error) {
      if ((error as { name?: string }).name === "ExpiredIteratorException") {
        // An iterator expires 5 minutes after it was returned (a reader that waited for room long can
        // outlast it). The lanes still hold records read after the checkpoint, so the new iterator starts
        // after the last record read: nothing is read twice and nothing is skipped.
        this.stats.expiredIterators += 1;
        const renewed = await this.#iterator(shardId, position, run.lastRead);
        if (renewed === undefined) return ReadOutcome.Ended;
        run.iterator = renewed;
      } else {
        run.readFailures += 1;
        await this.#readFailed(shardId, "GetRecords", error, run.readFailures);
      }
      return ReadOutcome.Again;
    }
    run.readFailures = 0;
    const records = this.#buffer(run, page, askedAt);
    this.#options.onEvent?.({
      type: "read",
      shardId,
      askedAt,
      answeredAt: this.#now(),
      records,
      buffered: run.waiting,
    });
    if (run.closed) return ReadOutcome.Ended;
    if (records === 0) {
      await this.#idle(pollIntervalMs);
      return ReadOutcome.Read;
    }
    const windowLeft = run.firstWaitingAt + parameters.batchingWindowMs - this.#now();
    if (run.waiting < parameters.batchSize && windowLeft > 0)
      await this.#idle(Math.min(windowLeft, pollIntervalMs));
    return ReadOutcome.Read;
  }

  /** A page's records into their lanes (§1.2); the shard's emptiness, iterator age and next iterator noted. */
  #buffer(run: ShardRun, page: GetRecordsCommandOutput, askedAt: number): number {
    const records = (page.Records ?? []).map(shardRecordOf);
    if (records.length > 0) {
      const now = this.#now();
      run.lastRead = (records.at(-1) as ShardRecord).sequenceNumber;
      if (run.waiting === 0) run.firstWaitingAt = now;
      for (const record of records) {
        const lane = run.lanes[laneOf(record.partitionKey, run.lanes.length)] as LaneQueue;
        if (lane.records.length === 0) lane.windowFrom = now;
        lane.records.push(record);
        run.inShardOrder.push(record);
        run.pastCheckpointBytes += record.data.byteLength;
        run.open.add(record);
        run.waiting += 1;
        run.waitingBytes += record.data.byteLength;
      }
      run.emptyAskedAt = undefined;
      this.#emptySince.delete(run.shardId);
    } else {
      run.emptyAskedAt = askedAt;
      this.#noteIdle(run);
    }
    run.reads += 1;
    this.stats.polledRecords += records.length;
    this.stats.maxIteratorAgeMs = Math.max(this.stats.maxIteratorAgeMs, page.MillisBehindLatest ?? 0);
    if (page.NextShardIterator) run.iterator = page.NextShardIterator;
    else run.closed = true;
    run.changed.notify();
    return records.length;
  }

  /**
   * With the last read empty and nothing waiting or being invoked, the shard is caught up since that read
   * was sent: every record put before it was read, and is done (see `caughtUpSince`).
   */
  #noteIdle(run: ShardRun): void {
    if (run.emptyAskedAt !== undefined && run.waiting === 0 && run.busyLanes === 0)
      this.#emptySince.set(run.shardId, run.emptyAskedAt);
  }

  /**
   * One lane (§1.2): takes its next batch, in shard order, as soon as it has one, while the reader reads on
   * and the other lanes run. A lane retrying a failed batch holds its own keys only, as different keys of a
   * shard run side by side (§1.2, §1.1 "keeps reading batches without pause while the function is
   * behind"). After a stop it takes no new batch: what waits is not done and is read again from the
   * checkpoint (§1.3, at least once).
   */
  async #runLane(run: ShardRun, lane: LaneQueue): Promise<void> {
    for (;;) {
      if (!this.#running || run.interrupted) return;
      if (lane.records.length === 0) {
        if (run.readerDone) return;
        await run.changed.wait();
        continue;
      }
      const waitMs = this.#laneWait(run, lane);
      if (waitMs === 0) await this.#runBatch(run, lane);
      else if (waitMs === Number.POSITIVE_INFINITY) await run.changed.wait();
      else await Promise.race([run.changed.wait(), this.#idle(waitMs)]);
    }
  }

  /**
   * How long a lane with records waits before its next batch: 0 to take it now, Infinity until the run
   * changes. A batch goes when it is full (BatchSize or 6 MB, §1.1), when nothing more will be read, or
   * when the lane's batching window has passed and a read was answered since its last batch: a short tail
   * waits for the next read, which may fill it, unless the reader itself waits for room in the lanes.
   */
  #laneWait(run: ShardRun, lane: LaneQueue): number {
    const { batchSize, batchingWindowMs } = this.#options.parameters;
    const n = this.#batchLength(lane.records, run.shardId);
    if (n >= batchSize || n < lane.records.length || run.readerDone) return 0;
    const windowLeft = lane.windowFrom + batchingWindowMs - this.#now();
    if (windowLeft > 0) return windowLeft;
    return run.reads > lane.readsAtTake || run.readerWaiting ? 0 : Number.POSITIVE_INFINITY;
  }

  /** The lane's next batch, run to its end (success, or given up); the checkpoint moves as records are done. */
  async #runBatch(run: ShardRun, lane: LaneQueue): Promise<void> {
    const batch = this.#batchFrom(lane.records, run.shardId);
    const now = this.#now();
    lane.readsAtTake = run.reads;
    if (lane.records.length > 0) lane.windowFrom = now;
    run.waiting -= batch.length;
    for (const record of batch) run.waitingBytes -= record.data.byteLength;
    if (run.waiting > 0) run.firstWaitingAt = now;
    if (run.busyLanes === 0) {
      run.busyFrom = now;
      run.busyRecords = 0;
    }
    run.busyLanes += 1;
    run.busyRecords += batch.length;
    // Room for the reader.
    run.changed.notify();
    let handed: Handed = Handed.Done;
    try {
      handed = await this.#processBatch(run.shardId, batch, 0, (records) => this.#done(run, records));
    } finally {
      run.busyLanes -= 1;
    }
    // What a stop kept from the destination is not done: the checkpoint stays before it, so a mapping that
    // starts from the checkpoint reads it again (at least once, §1.3); no lane takes another batch.
    if (handed === Handed.Stopped) run.interrupted = true;
    if (run.busyLanes === 0) {
      this.#options.onEvent?.({
        type: "round",
        shardId: run.shardId,
        from: run.busyFrom,
        at: this.#now(),
        records: run.busyRecords,
      });
    }
    this.#noteIdle(run);
    run.changed.notify();
  }

  /**
   * Records done (succeeded, committed by a partial answer, or discarded): the checkpoint moves past every
   * record done before the first one not done, in shard order across lanes. A partial answer commits the
   * records before the lowest reported one (§1.4 checkpoint rule) while the rest is retried, and a bisected
   * half that succeeded is done while the other half runs. It never passes a record not yet done, nor one
   * still waiting in a lane (another lane's, §1.2).
   */
  #done(run: ShardRun, records: readonly ShardRecord[]): void {
    for (const record of records) run.open.delete(record);
    const order = run.inShardOrder;
    let last: ShardRecord | undefined;
    while (run.head < order.length && !run.open.has(order[run.head] as ShardRecord)) {
      last = order[run.head] as ShardRecord;
      run.pastCheckpointBytes -= last.data.byteLength;
      run.head += 1;
    }
    if (last) {
      const current = this.checkpoints.get(run.shardId);
      if (current === undefined || compareSequenceNumbers(last.sequenceNumber, current) > 0)
        this.checkpoints.set(run.shardId, last.sequenceNumber);
      // The records behind the checkpoint are no longer needed; dropped in one go now and then.
      if (run.head >= 1_024 && run.head * 2 >= order.length) {
        order.splice(0, run.head);
        run.head = 0;
      }
      run.changed.notify();
    }
  }

  /** How many records of a lane's queue its next batch takes: up to BatchSize and the 6 MB payload (§1.1). */
  #batchLength(queue: readonly ShardRecord[], shardId: string): number {
    const { batchSize } = this.#options.parameters;
    let bytes = 2 + Buffer.byteLength('{"Records":[]}');
    let n = 0;
    while (n < queue.length && n < batchSize) {
      const size = this.#eventBytes(queue[n] as ShardRecord, shardId);
      if (n > 0 && bytes + size > MAX_PAYLOAD_BYTES) break;
      bytes += size;
      n += 1;
    }
    return n;
  }

  /** The next batch of a lane's queue, taken off it: up to BatchSize records and the 6 MB payload (§1.1). */
  #batchFrom(queue: ShardRecord[], shardId: string): ShardRecord[] {
    return queue.splice(0, this.#batchLength(queue, shardId));
  }

  /** A record's size in the serialised event, measured once. */
  #eventBytes(record: ShardRecord, shardId: string): number {
    let size = this.#eventSize.get(record);
    if (size === undefined) {
      size = eventRecordBytes(this.#eventRecord(record, shardId));
      this.#eventSize.set(record, size);
    }
    return size;
  }

  #eventRecord(record: ShardRecord, shardId: string): KinesisStreamRecord {
    let form = this.#eventForm.get(record);
    if (!form) {
      form = kinesisEventRecord(record, shardId, this.#options.stream);
      this.#eventForm.set(record, form);
    }
    return form;
  }

  #exhausted(attempts: number): boolean {
    const max = this.#options.parameters.maximumRetryAttempts;
    return max !== -1 && attempts > max;
  }

  /**
   * Runs a batch to completion: success, or its records handed to the on-failure destination. `done` is
   * told of records as they are done (succeeded, committed by a partial answer, or discarded), so that
   * the checkpoint moves past them.
   */
  async #processBatch(
    shardId: string,
    initial: readonly ShardRecord[],
    inheritedAttempts: number,
    done: (records: readonly ShardRecord[]) => void,
  ): Promise<Handed> {
    let batch = [...initial];
    let attempts = inheritedAttempts;
    for (;;) {
      const fresh = await this.#withoutExpired(shardId, batch, attempts, done);
      if (fresh === Handed.Stopped) return Handed.Stopped;
      batch = fresh;
      if (batch.length === 0) return Handed.Done;

      const { result, iteratorAgeMs } = await this.#invokeBatch(shardId, batch);
      const after =
        result.kind === "function-error"
          ? await this.#afterFunctionError(shardId, batch, attempts, iteratorAgeMs, done)
          : this.#afterAnswer(shardId, batch, result.payload, iteratorAgeMs, done);
      if (after.next === "finished") return after.handed;
      batch = after.rest;
      if (after.next === "split") continue;
      attempts += 1;
      if (this.#exhausted(attempts)) {
        const handed = await this.#discard(
          shardId,
          batch,
          FailureCondition.RetryAttemptsExhausted,
          attempts,
          after.functionError,
        );
        if (handed === Handed.Done) done(batch);
        return handed;
      }
      // A stop ends the retries, before the wait and after it: the batch is not done, the checkpoint stays
      // before it and a mapping started from the checkpoint reads it again (at least once, §1.3). Without
      // this a batch retried without limit (MaximumRetryAttempts -1, AWS's default) kept stop() waiting.
      if (!this.#running) return Handed.Stopped;
      this.stats.retriedBatches += 1;
      await this.#idle(this.#options.retryDelayMs?.(attempts) ?? backoffDelayMs(attempts, BATCH_BACKOFF));
      if (!this.#running) return Handed.Stopped;
    }
  }

  /** The batch without its records past MaximumRecordAgeInSeconds, those discarded; Stopped if a stop kept them. */
  async #withoutExpired(
    shardId: string,
    batch: ShardRecord[],
    attempts: number,
    done: (records: readonly ShardRecord[]) => void,
  ): Promise<ShardRecord[] | typeof Handed.Stopped> {
    const { parameters } = this.#options;
    if (parameters.maximumRecordAgeMs === -1) return batch;
    // Per record, not per batch (§1.3, AWS-recorded).
    const cutoff = this.#now() - parameters.maximumRecordAgeMs;
    const expired = batch.filter((r) => r.arrivalMs < cutoff);
    if (expired.length === 0) return batch;
    const handed = await this.#discard(
      shardId,
      expired,
      FailureCondition.RecordAgeExceeded,
      Math.max(1, attempts),
    );
    if (handed === Handed.Stopped) return handed;
    done(expired);
    return batch.filter((r) => r.arrivalMs >= cutoff);
  }

  /** One invocation of the function with the batch, counted, and the batch's iterator age when invoked. */
  async #invokeBatch(
    shardId: string,
    batch: readonly ShardRecord[],
  ): Promise<{ readonly result: InvokeResult; readonly iteratorAgeMs: number }> {
    const event = { Records: batch.map((r) => this.#eventRecord(r, shardId)) };
    const oldest = Math.min(...batch.map((r) => r.arrivalMs));
    const iteratorAgeMs = this.#now() - oldest;
    this.stats.maxIteratorAgeMs = Math.max(this.stats.maxIteratorAgeMs, iteratorAgeMs);
    this.stats.invocations += 1;
    this.stats.invokedRecords += batch.length;
    const result = await this.#options.function.invoke(event);
    return { result, iteratorAgeMs };
  }

  /** A function error: the batch bisected and each half run (bisect on), else the whole batch retried. */
  async #afterFunctionError(
    shardId: string,
    batch: ShardRecord[],
    attempts: number,
    iteratorAgeMs: number,
    done: (records: readonly ShardRecord[]) => void,
  ): Promise<AfterInvoke> {
    this.stats.functionErrors += 1;
    this.#options.onEvent?.({
      type: "invoked",
      shardId,
      records: batch.length,
      outcome: "function-error",
      iteratorAgeMs,
    });
    if (this.#options.parameters.bisectBatchOnFunctionError && batch.length > 1) {
      // Splitting does not use up the retry quota (§1.3): each half starts from the same count.
      this.stats.bisections += 1;
      this.#options.onEvent?.({ type: "bisected", shardId, records: batch.length });
      const half = Math.ceil(batch.length / 2);
      if ((await this.#processBatch(shardId, batch.slice(0, half), attempts, done)) === Handed.Stopped)
        return { next: "finished", handed: Handed.Stopped };
      return {
        next: "finished",
        handed: await this.#processBatch(shardId, batch.slice(half), attempts, done),
      };
    }
    return { next: "retry", rest: batch, functionError: "Unhandled" };
  }

  /** An answer: success, or (ReportBatchItemFailures) a partial answer or one that fails the whole batch. */
  #afterAnswer(
    shardId: string,
    batch: ShardRecord[],
    payload: string,
    iteratorAgeMs: number,
    done: (records: readonly ShardRecord[]) => void,
  ): AfterInvoke {
    if (!this.#options.parameters.reportBatchItemFailures) {
      this.#options.onEvent?.({
        type: "invoked",
        shardId,
        records: batch.length,
        outcome: "success",
        iteratorAgeMs,
      });
      done(batch);
      return { next: "finished", handed: Handed.Done };
    }
    const reading = readBatchResponse(payload, new Set(batch.map((r) => r.sequenceNumber)));
    this.#options.onEvent?.({
      type: "invoked",
      shardId,
      records: batch.length,
      outcome: reading.kind,
      iteratorAgeMs,
    });
    if (reading.kind === "success") {
      done(batch);
      return { next: "finished", handed: Handed.Done };
    }
    if (reading.kind === "partial") return this.#afterPartial(shardId, batch, reading.failed, done);
    this.stats.invalidResponses += 1;
    return { next: "retry", rest: batch, functionError: null };
  }

  /** A partial answer: the records before the lowest failed one committed, the rest split off or retried. */
  #afterPartial(
    shardId: string,
    batch: ShardRecord[],
    failed: readonly string[],
    done: (records: readonly ShardRecord[]) => void,
  ): AfterInvoke {
    // Checkpoint before the lowest failed sequence number; retry from it (§1.4).
    this.stats.partialFailures += 1;
    const lowest = failed.reduce((a, b) => (compareSequenceNumbers(a, b) <= 0 ? a : b));
    const retryFrom = batch.findIndex((r) => r.sequenceNumber === lowest);
    // Everything before it is committed (§1.4 checkpoint rule), whatever happens to the rest.
    done(batch.slice(0, retryFrom));
    // With bisect on, that is a split at the returned sequence number (§1.4 "Bisect on"). A failure
    // at the first record splits nothing off: it is an attempt like any other.
    if (this.#options.parameters.bisectBatchOnFunctionError && retryFrom > 0) {
      const attemptUsed = this.#partialSplitAccounting === PartialSplitAccounting.CountsAttempt;
      this.stats.partialSplits += 1;
      this.#options.onEvent?.({
        type: "partial-split",
        shardId,
        records: batch.length,
        retried: batch.length - retryFrom,
        attemptUsed,
      });
      // The rest is invoked at once with the attempts it had, as a bisected half is (§1.3).
      if (!attemptUsed) return { next: "split", rest: batch.slice(retryFrom) };
    }
    return { next: "retry", rest: batch.slice(retryFrom), functionError: null };
  }

  async #discard(
    shardId: string,
    records: readonly ShardRecord[],
    condition: FailureCondition,
    invokeCount: number,
    functionError: "Unhandled" | null = null,
  ): Promise<Handed> {
    this.stats.discardedRecords += records.length;
    const record = failureRecord({
      records,
      shardId,
      streamArn: this.#options.stream.streamArn,
      functionArn: this.#options.function.arn,
      requestId: randomUUID(),
      condition,
      invokeCount,
      functionError,
      now: this.#now(),
    });
    this.#options.onEvent?.({ type: "discarded", record });
    const destination = this.#options.onFailure;
    if (!destination) return Handed.Done;
    // The real clock, not `now`: the span is how long this mapping waits, not the records' age.
    const giveUpAt = performance.now() + (this.#options.destinationRetrySpanMs ?? DESTINATION_RETRY_SPAN_MS);
    const delayMs = (r: number) => backoffDelayMs(r, DESTINATION_BACKOFF);
    const requestBoundMs = this.#options.requestBoundMs ?? REQUEST_BOUND_MS;
    // Stop ends the tries (a try in flight runs to its end, as an invocation does): else stop waits out
    // the span.
    const stop = this.#stopping.signal;
    try {
      await retry(
        () =>
          this.#send(
            "SendMessage",
            shardId,
            (abortSignal) =>
              destination.sqs.send(
                new SendMessageCommand({
                  QueueUrl: destination.queueUrl,
                  MessageBody: JSON.stringify(record),
                }),
                { abortSignal },
              ),
            // No try outlasts the span: a try begun late in it would hold the batch a bound past it.
            Math.min(requestBoundMs, Math.max(1, Math.ceil(giveUpAt - performance.now()))),
          ),
        {
          maxAttempts: Number.POSITIVE_INFINITY,
          delayMs,
          retryable: (_error, attempt) => !stop.aborted && performance.now() + delayMs(attempt) < giveUpAt,
          sleep: (ms) => sleep(ms, stop),
        },
      );
      this.stats.onFailureDelivered += records.length;
      this.stats.onFailureMessages += 1;
    } catch (error) {
      // Neither delivered nor given up on: the batch is not done (see #runBatch).
      if (stop.aborted) return Handed.Stopped;
      this.stats.destinationDeliveryFailures += 1;
      const errorName = error instanceof Error ? error.name : typeof error;
      this.#options.onEvent?.({ type: "destination-failed", record, errorName });
    }
    return Handed.Done;
  }
}
