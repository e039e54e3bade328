import { kinesisRecord } from "@mcp-pipeline/emulators/testing";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkpointProgress, type Deadline, processKinesisBatch, SchedulingRule } from "../../src/index.js";
import { adaptiveRule, FIT_SLACK, idealRemainingMs } from "../../src/schedule.js";
import { StepClock } from "../harness.js";

/**
 * docs/architecture.md quality bar: the engine stays close to the ideal bound max(ceil(N / C), max_k n_k) x L.
 * With every record taking one step (L = 1), picking the key with the most records left is Hu's rule,
 * which is optimal for chains, so the step count must equal the bound exactly. Wall-clock throughput
 * is measured by the benchmark script instead (docs/batch-engine.md).
 */
describe("key-ordered scheduling meets the ideal makespan bound", () => {
  it("finishes every batch in exactly max(ceil(N/C), longest key) steps", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 11 }), { minLength: 1, maxLength: 120 }),
        fc.integer({ min: 1, max: 8 }),
        async (keyIds, concurrency) => {
          const records = keyIds.map((k, i) =>
            kinesisRecord({ partitionKey: `k${k}`, data: {}, sequence: i }),
          );
          const perKey = new Map<number, number>();
          for (const k of keyIds) perKey.set(k, (perKey.get(k) ?? 0) + 1);
          const bound = Math.max(Math.ceil(records.length / concurrency), ...perKey.values());

          const clock = new StepClock();
          const { steps, result } = await clock.drive(
            processKinesisBatch(records, {
              handle: clock.handler(),
              setAside: async () => undefined,
              concurrency,
            }),
          );
          expect(result.counts.succeeded).toBe(records.length);
          expect(steps).toBe(bound);
        },
      ),
      { numRuns: 300, seed: 20261130 },
    );
  });

  it("a single hot key bounds the batch: 50 records of one key and 50 of others take 50 steps at C=4", async () => {
    const keys = [...Array(50).fill("hot"), ...Array.from({ length: 50 }, (_, i) => `cold-${i}`)];
    const records = keys.map((k, i) => kinesisRecord({ partitionKey: k, data: {}, sequence: i }));
    const clock = new StepClock();
    const { steps } = await clock.drive(
      processKinesisBatch(records, {
        handle: clock.handler(),
        setAside: async () => undefined,
        concurrency: 4,
      }),
    );
    expect(steps).toBe(50);
  });
});

/**
 * Defect 9 of issue 10: under a deadline, checkpoint progress comes first. A Kinesis checkpoint cannot
 * pass the first record that needs redelivery (§1.4), so work done after an unstarted record is
 * redelivered. Each step is one record latency of 10 ms on the deadline's clock.
 */
describe("under a deadline, the checkpoint moves first (schedule.ts)", () => {
  // Eight single-record keys first in the shard, then eight records of one hot key.
  const keys = [...Array.from({ length: 8 }, (_, i) => `cold-${i}`), ...Array(8).fill("hot")];
  const records = keys.map((k, i) => kinesisRecord({ partitionKey: k, data: {}, sequence: i }));

  function deadlineAt(clock: StepClock, step: number): Deadline {
    return {
      reached: () => clock.now >= step,
      timeLeftMs: () => (step - clock.now) * 10,
      expectedRecordMs: 10,
      nowMs: () => clock.now * 10,
    };
  }

  async function runWith(schedule: SchedulingRule | undefined, deadlineStep: number) {
    const clock = new StepClock();
    const { steps, result } = await clock.drive(
      processKinesisBatch(records, {
        handle: clock.handler(),
        setAside: async () => undefined,
        concurrency: 2,
        deadline: deadlineAt(clock, deadlineStep),
        ...(schedule ? { schedule } : {}),
      }),
    );
    return { steps, progress: checkpointProgress(result), succeeded: result.counts.succeeded };
  }

  it("when the batch cannot finish, records start in shard order: 6 records checkpointed instead of 3", async () => {
    // Longest key first runs the hot key from step 0 and one cold key beside it: at the deadline
    // (step 3) cold-3 is unstarted, so only 3 records are kept and the 3 hot records that ran are
    // redelivered. Shard order keeps 6.
    expect(await runWith(SchedulingRule.LongestKeyFirst, 3)).toMatchObject({ progress: 3, succeeded: 6 });
    expect(await runWith(undefined, 3)).toMatchObject({ progress: 6, succeeded: 6 });
  });

  it("when the batch clearly fits, Hu's rule is kept: 8 steps (the ideal bound), not the 12 of shard order", async () => {
    expect(await runWith(undefined, 100)).toEqual({ steps: 8, progress: 16, succeeded: 16 });
    expect(await runWith(SchedulingRule.EarliestRecordFirst, 100)).toEqual({
      steps: 12,
      progress: 16,
      succeeded: 16,
    });
  });

  it("with time known and ample, every random batch still meets the ideal bound exactly", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 11 }), { minLength: 1, maxLength: 120 }),
        fc.integer({ min: 1, max: 8 }),
        async (keyIds, concurrency) => {
          const batch = keyIds.map((k, i) => kinesisRecord({ partitionKey: `k${k}`, data: {}, sequence: i }));
          const perKey = new Map<number, number>();
          for (const k of keyIds) perKey.set(k, (perKey.get(k) ?? 0) + 1);
          const bound = Math.max(Math.ceil(batch.length / concurrency), ...perKey.values());
          const clock = new StepClock();
          const { steps } = await clock.drive(
            processKinesisBatch(batch, {
              handle: clock.handler(),
              setAside: async () => undefined,
              concurrency,
              // Time for 1.5x the bound, the least the adaptive rule needs to keep Hu's rule throughout.
              deadline: deadlineAt(clock, Math.ceil(FIT_SLACK * bound)),
            }),
          );
          expect(steps).toBe(bound);
        },
      ),
      { numRuns: 200, seed: 20261130 },
    );
  });

  it("the adaptive rule: longest key first only while the time left is at least 1.5x the ideal remaining time", () => {
    const work = { recordMs: 10, pendingRecords: 40, longestChain: 8, concurrency: 4 };
    // ideal remaining = max(ceil(40 / 4), 8) x 10 ms = 100 ms
    expect(idealRemainingMs({ ...work, timeLeftMs: 0 })).toBe(100);
    expect(adaptiveRule({ ...work, timeLeftMs: 150 })).toBe(SchedulingRule.LongestKeyFirst);
    expect(adaptiveRule({ ...work, timeLeftMs: 149 })).toBe(SchedulingRule.EarliestRecordFirst);
    expect(adaptiveRule({ ...work, longestChain: 30, timeLeftMs: 449 })).toBe(
      SchedulingRule.EarliestRecordFirst,
    );
  });
});
