import { messageGroupIdOf, messageIdOf, partitionKeyOf } from "@mcp-pipeline/contracts";
import type { KinesisStreamRecord, SQSRecord } from "aws-lambda";
import type { Deadline } from "./deadline.js";
import { FailureScope, type ItemHandler, runKeyOrdered, type SetAside } from "./key-ordered-runner.js";
import type { BatchOutcome } from "./outcome.js";
import type { SchedulingRule } from "./schedule.js";

export interface BatchOptions<T> {
  readonly handle: ItemHandler<T>;
  /** Where permanent failures go; it must be durable before it returns (quarantine, DLQ, result store). */
  readonly setAside: SetAside<T>;
  /** Keys (partition keys, groups, messages) in flight at once. */
  readonly concurrency: number;
  readonly deadline?: Deadline;
  /** Which ready key starts next; `adaptive` (the default) is right outside benchmarks (schedule.ts). */
  readonly schedule?: SchedulingRule;
}

/** A mode of the engine: how a record names its key, and how far one failure reaches. */
function mode<T>(keyOf: (record: T, index: number) => string, failureScope: FailureScope) {
  return (records: readonly T[], options: BatchOptions<T>): Promise<BatchOutcome<T>> =>
    runKeyOrdered({ ...options, items: records, keyOf, failureScope });
}

/**
 * Kinesis: records of one partition key strictly in shard order, keys concurrently. This is why the
 * project has its own engine: Powertools' BatchProcessor runs Kinesis records in parallel without
 * regard to partition key (docs/aws-semantics.md §8 "Ordering broken by parallel processing in Powertools"),
 * and its sequential mode gives up all concurrency.
 */
export const processKinesisBatch = mode<KinesisStreamRecord>(
  (r, index) => partitionKeyOf(r) ?? ownKey(index),
  FailureScope.KeyAndLater,
);

/** SQS standard queue: every message on its own, `concurrency` at a time (§2.1, §2.3). */
export const processSqsBatch = mode<SQSRecord>((r, index) => {
  const id = messageIdOf(r);
  return id !== undefined ? `message:${id}` : ownKey(index);
}, FailureScope.Item);

/**
 * SQS FIFO queue: groups concurrently, each group in order; at a group's first failure the rest of
 * that group is reported too, other groups go on (§3 "Partial failure guidance"). A record without a
 * MessageGroupId (a standard queue wired to a FIFO worker by mistake) is treated as a group of its own
 * rather than failing the batch forever.
 */
export const processSqsFifoBatch = mode<SQSRecord>((r, index) => {
  const group = messageGroupIdOf(r);
  if (group !== undefined) return `group:${group}`;
  const id = messageIdOf(r);
  return id !== undefined ? `message:${id}` : ownKey(index);
}, FailureScope.Key);

/**
 * The key of a record whose own key cannot be read (a malformed record, lambda-records.ts): a lane of its
 * own, so that it fails alone. The SQS keys above have prefixes of their own; a partition key that happens
 * to be this text would only be ordered with the record, never lose it.
 */
function ownKey(index: number): string {
  return `\u0000record:${index}`;
}
