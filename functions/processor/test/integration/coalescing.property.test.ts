/**
 * The coalescing path against the per-event path it replaced (tools/bench/src/processor/per-event-path.ts),
 * on dynalite: random workloads (calls, sessions, retries, late events, producer duplicates, shuffled orders), cut
 * into random batches, delivered the way Lambda does for Kinesis (after a partial failure, again from
 * the reported sequence number: docs/aws-semantics.md §1.4 "Checkpoint rule"), with write failures injected
 * into the tool-calls client: failures before the write reaches the table, and failures after it was
 * applied (the answer lost on the way back).
 */
import { ProvisionedThroughputExceededException } from "@aws-sdk/client-dynamodb";
import type { PartialBatchResponse } from "@mcp-pipeline/batch";
import { decodeLifecycleEvent } from "@mcp-pipeline/contracts";
import { lambdaContext } from "@mcp-pipeline/emulators/testing";
import { seededRandom } from "@mcp-pipeline/retry";
import { applyEvent, type ToolCallState } from "@mcp-pipeline/tool-calls";
import type { KinesisStreamRecord } from "aws-lambda";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lifecycleWorkload } from "../../../../tools/bench/src/processor/lifecycle-workload.js";
import { processPerEvent } from "../../../../tools/bench/src/processor/per-event-path.js";
import { processToolCallEvents } from "../../src/core.js";
import { Stack } from "../stack.js";

type Fault = "none" | "before" | "after";

let stack: Stack;
/** Faults for the next PutItem requests on the tool-calls client, in order; then every write succeeds. */
let faults: Fault[] = [];

beforeAll(async () => {
  stack = await Stack.start();
  stack.toolCallsClient.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== "PutItemCommand") return next(args);
      const fault = faults.shift() ?? "none";
      const throttled = () =>
        new ProvisionedThroughputExceededException({
          message: "injected by the property test",
          $metadata: {},
        });
      if (fault === "before") throw throttled();
      const output = await next(args);
      if (fault === "after") throw throttled();
      return output;
    },
    { step: "initialize", name: "injectWriteFaults" },
  );
});
afterAll(() => stack.stop());

const eventOf = (record: KinesisStreamRecord) => {
  const decoded = decodeLifecycleEvent(record.kinesis.data);
  if (!decoded.ok) throw decoded.error;
  return decoded.value;
};

/** What an acknowledged record promises: its event is in its call (folding it again changes nothing). */
async function expectReflected(acknowledged: readonly KinesisStreamRecord[]): Promise<void> {
  const calls = await stack.calls();
  for (const record of acknowledged) {
    const event = eventOf(record);
    const stored = calls.get(event.callId);
    expect(stored, `acknowledged ${event.eventId} but its call is not stored`).toBeDefined();
    const again = applyEvent(stored, event).change;
    expect(["duplicate", "unchanged"], `acknowledged ${event.eventId} is not reflected`).toContain(again);
  }
}

/**
 * Delivers the stream in batches of `batchSize` like a Kinesis ESM: a batch answered with a partial
 * failure is delivered again from the reported record. Checks after every invocation that nothing
 * before the checkpoint is unapplied.
 */
async function deliver(
  records: readonly KinesisStreamRecord[],
  batchSize: number,
  process: (batch: KinesisStreamRecord[]) => Promise<{ response: PartialBatchResponse }>,
): Promise<number> {
  let position = 0;
  let invocations = 0;
  while (position < records.length) {
    invocations += 1;
    if (invocations > 200) throw new Error("the stream did not drain: a record is stuck");
    const batch = records.slice(position, position + batchSize);
    const { response } = await process(batch);
    const reported = response.batchItemFailures[0]?.itemIdentifier;
    const done =
      reported === undefined ? batch.length : batch.findIndex((r) => r.kinesis.sequenceNumber === reported);
    expect(done).toBeGreaterThanOrEqual(0);
    await expectReflected(batch.slice(0, done));
    position += done;
  }
  return invocations;
}

/** The item without its write bookkeeping: what a reader of the table sees. */
function content({ version: _v, recentEventIds: _r, ...rest }: ToolCallState) {
  return rest;
}

const scenario = fc.record({
  calls: fc.integer({ min: 1, max: 8 }),
  sessions: fc.integer({ min: 1, max: 3 }),
  duplicates: fc.integer({ min: 0, max: 8 }),
  retryRate: fc.double({ min: 0, max: 1, noNaN: true }),
  lateRate: fc.double({ min: 0, max: 0.5, noNaN: true }),
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  shuffle: fc.boolean(),
  batchSize: fc.integer({ min: 1, max: 40 }),
  concurrency: fc.integer({ min: 1, max: 4 }),
  faults: fc.array(fc.constantFrom<Fault>("none", "before", "after"), { maxLength: 12 }),
});

describe("coalescing path = per-event path, on dynalite", () => {
  it("leaves the same tool-calls table, acknowledges nothing it did not apply, whatever the batches, duplicates, orders and write failures", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const rng = seededRandom(s.seed);
        const base = lifecycleWorkload({
          calls: s.calls,
          sessions: s.sessions,
          retryRate: s.retryRate,
          lateRate: s.lateRate,
          rng,
        });
        const records = lifecycleWorkload({
          calls: s.calls,
          sessions: s.sessions,
          retryRate: s.retryRate,
          lateRate: s.lateRate,
          records: base.events.length + s.duplicates,
          rng: seededRandom(s.seed),
        }).records.slice();
        if (s.shuffle) {
          for (let i = records.length - 1; i > 0; i--) {
            const j = Math.floor(rng() * (i + 1));
            [records[i], records[j]] = [records[j] as KinesisStreamRecord, records[i] as KinesisStreamRecord];
          }
        }
        // Sequence numbers follow the (possibly shuffled) stream order, as the shard assigns them.
        const stream = records.map((r, i) => ({
          ...r,
          kinesis: { ...r.kinesis, sequenceNumber: String(1_000_000 + i).padStart(21, "4") },
        }));

        await stack.reset();
        faults = [];
        await deliver(stream, s.batchSize, (batch) =>
          processPerEvent(batch, lambdaContext(), stack.perEventDeps({ concurrency: s.concurrency })),
        );
        const reference = await stack.calls();

        await stack.reset();
        faults = [...s.faults];
        await deliver(stream, s.batchSize, (batch) =>
          processToolCallEvents(batch, lambdaContext(), stack.deps({ concurrency: s.concurrency })),
        );
        faults = [];
        const coalesced = await stack.calls();

        expect([...coalesced.keys()].sort()).toEqual([...reference.keys()].sort());
        for (const [callId, item] of reference) {
          const other = coalesced.get(callId) as ToolCallState;
          if (s.faults.every((f) => f === "none")) {
            // Same deliveries, same order of events per call: the same item to the byte.
            expect(other).toEqual(item);
          } else {
            // Failures change which events each write carries, so the bookkeeping (version, recent
            // event ids) may differ; what a reader sees may not.
            expect(content(other)).toEqual(content(item));
          }
        }
      }),
      { numRuns: 20 },
    );
    // A generous bound for a loaded machine: each run drives two paths over dynalite. Not a speed check.
  }, 600_000);
});
