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

/**
 * Kinesis: records of one partition key strictly in shard order, keys concurrently. This is why the
 * project has its own engine: Powertools' BatchProcessor runs Kinesis records in parallel without
 * regard to partition key (docs/aws-semantics.md §8 "Ordering broken by parallel processing in Powertools"),
 * and its sequential mode gives up all concurrency.
 */
export function processKinesisBatch(
  records: readonly KinesisStreamRecord[],
  options: BatchOptions<KinesisStreamRecord>,
): Promise<BatchOutcome<KinesisStreamRecord>> {
  return runKeyOrdered({
    ...options,
    items: records,
    keyOf: (r) => r.kinesis.partitionKey,
    failureScope: FailureScope.KeyAndLater,
  });
}

/** SQS standard queue: every message on its own, `concurrency` at a time (§2.1, §2.3). */
export function processSqsBatch(
  records: readonly SQSRecord[],
  options: BatchOptions<SQSRecord>,
): Promise<BatchOutcome<SQSRecord>> {
  return runKeyOrdered({
    ...options,
    items: records,
    keyOf: (r) => `message:${r.messageId}`,
    failureScope: FailureScope.Item,
  });
}

/**
 * SQS FIFO queue: groups concurrently, each group in order; at a group's first failure the rest of
 * that group is reported too, other groups go on (§3 "Partial failure guidance"). A record without a
 * MessageGroupId (a standard queue wired to a FIFO worker by mistake) is treated as a group of its own
 * rather than failing the batch forever.
 */
export function processSqsFifoBatch(
  records: readonly SQSRecord[],
  options: BatchOptions<SQSRecord>,
): Promise<BatchOutcome<SQSRecord>> {
  return runKeyOrdered({
    ...options,
    items: records,
    keyOf: (r) => {
      const group = r.attributes.MessageGroupId;
      return group ? `group:${group}` : `message:${r.messageId}`;
    },
    failureScope: FailureScope.Key,
  });
}
