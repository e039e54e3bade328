/**
 * Which ready key the engine starts when a slot frees.
 *
 * - `LongestKeyFirst`: the key with the most records left (ties: the earliest record). For equal record
 *   latency this is Hu's list-scheduling rule, optimal for chains: the batch takes exactly
 *   max(ceil(N / C), max_k n_k) record latencies. But a deadline that stops the batch may leave an early
 *   record of a short key unstarted while later records of the long key ran; on Kinesis the checkpoint
 *   cannot pass the first unstarted record, so all that later work is redelivered.
 * - `EarliestRecordFirst`: the key whose next record comes first in the batch (shard order). Records
 *   start close to shard order, so when the deadline stops the batch, what ran is (nearly) a prefix and
 *   the checkpoint moves past it. It can lengthen the batch when a long key lies late in the batch.
 * - `Adaptive` (the default): longest key first while the rest of the batch clearly fits in the time
 *   left before the deadline (then the order costs nothing: every record finishes), earliest record
 *   first once it does not. The numbers behind the choice are in docs/batch-engine.md.
 */
export const SchedulingRule = {
  Adaptive: "adaptive",
  LongestKeyFirst: "longest-key-first",
  EarliestRecordFirst: "earliest-record-first",
} as const;
export type SchedulingRule = (typeof SchedulingRule)[keyof typeof SchedulingRule];

/**
 * The rest of the batch "clearly fits" when the time left is at least this many times the time it needs
 * by the ideal bound. Record latencies vary (the estimate is the slowest record seen so far, or the
 * deadline's hint), and a batch that almost fits under longest-key-first loses the most progress when
 * it does not: the benchmark (docs/benchmarks/batch-engine.md) shows 1.5 keeps the makespan of Hu's rule
 * whenever there is room and the checkpoint progress of shard order whenever there is not.
 */
export const FIT_SLACK = 1.5;

export interface RemainingWork {
  /** Time left before the deadline is reached, ms. */
  readonly timeLeftMs: number;
  /** Expected latency of one record, ms. */
  readonly recordMs: number;
  /** Records not finished yet (in flight or waiting). */
  readonly pendingRecords: number;
  /** The most records left on one key, counting the one in flight. */
  readonly longestChain: number;
  readonly concurrency: number;
}

/** The ideal time the rest of the batch needs: max(ceil(pending / C), longest chain) x latency. */
export function idealRemainingMs(work: RemainingWork): number {
  return Math.max(Math.ceil(work.pendingRecords / work.concurrency), work.longestChain) * work.recordMs;
}

/** The rule the adaptive schedule applies for this much work and time (a pure function, tested alone). */
export function adaptiveRule(
  work: RemainingWork,
): typeof SchedulingRule.LongestKeyFirst | typeof SchedulingRule.EarliestRecordFirst {
  return work.timeLeftMs >= FIT_SLACK * idealRemainingMs(work)
    ? SchedulingRule.LongestKeyFirst
    : SchedulingRule.EarliestRecordFirst;
}
