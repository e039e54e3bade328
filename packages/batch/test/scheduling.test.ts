import { kinesisRecord } from "@mcp-pipeline/testing";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { processKinesisBatch } from "../src/index.js";
import { StepClock } from "./harness.js";

/**
 * DESIGN.md quality bar: the engine stays close to the ideal bound max(ceil(N / C), max_k n_k) x L.
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
