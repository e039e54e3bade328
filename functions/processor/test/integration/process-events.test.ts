import { decodeLifecycleEvent, TransientError } from "@mcp-pipeline/contracts";
import { kinesisRecord, lambdaContext, sequenceNumber } from "@mcp-pipeline/emulators/testing";
import { seededRandom } from "@mcp-pipeline/retry";
import { applyEvent, type ToolCallState } from "@mcp-pipeline/tool-calls";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  lifecycleWorkload,
  syntheticBatch,
} from "../../../../tools/bench/src/processor/lifecycle-workload.js";
import { processToolCallEvents } from "../../src/core.js";
import { Stack, startedRecords } from "../stack.js";

let stack: Stack;
beforeAll(async () => {
  stack = await Stack.start();
});
afterAll(() => stack.stop());
beforeEach(() => stack.reset());

describe("processor on DynamoDB and S3 emulators", () => {
  it("200 records, record 83 not JSON: 199 applied, 83 quarantined with its reason, nothing reported", async () => {
    const { records } = startedRecords(200, 20);
    records[83] = kinesisRecord({ partitionKey: "session-3", data: "{ this is not json", sequence: 83 });

    const { response, summary } = await processToolCallEvents(records, lambdaContext(), stack.deps());

    expect(response).toEqual({ batchItemFailures: [] });
    expect(summary).toMatchObject({ records: 200, applied: 199, quarantined: 1, failed: 0, duplicates: 0 });
    const calls = await stack.calls();
    expect(calls.size).toBe(199);
    expect(calls.has("call-83")).toBe(false);
    const quarantined = await stack.quarantined();
    expect(quarantined).toHaveLength(1);
    expect(quarantined[0]).toMatchObject({
      source: {
        sequenceNumber: sequenceNumber(83),
        partitionKey: "session-3",
        shardId: "shardId-000000000000",
      },
      reason: { code: "bad-json" },
      data: records[83]?.kinesis.data,
    });
  });

  it("quarantines every kind of undecodable record with its own reason code", async () => {
    const { records } = startedRecords(4, 1);
    const bad = [
      { ...records[0], kinesis: { ...records[0]?.kinesis, data: "%%%" } },
      kinesisRecord({ partitionKey: "session-0", data: { specVersion: "2.0" }, sequence: 1 }),
      kinesisRecord({ partitionKey: "session-0", data: { specVersion: "1.0", type: "nope" }, sequence: 2 }),
      records[3],
    ] as typeof records;
    const { response } = await processToolCallEvents(bad, lambdaContext(), stack.deps());
    expect(response.batchItemFailures).toEqual([]);
    const reasons = (await stack.quarantined()).map((q) => q.reason.code).sort();
    expect(reasons).toEqual(["bad-encoding", "schema-violation", "unsupported-version"]);
    expect(
      (await stack.quarantined()).find((q) => q.reason.code === "schema-violation")?.reason.details,
    ).toBeDefined();
    expect((await stack.calls()).has("call-3")).toBe(true);
  });

  it("a transient failure in one key: exactly its sequence number, earlier keys applied, nothing later started", async () => {
    const { records } = startedRecords(40, 4);
    const failing = 21; // session-1
    const deps = stack.deps({ concurrency: 4 });
    const started: number[] = [];
    const real = deps.toolCalls;
    const { response } = await processToolCallEvents(records, lambdaContext(), {
      ...deps,
      toolCalls: {
        prefetch: (ids) => real.prefetch(ids),
        applyEvents: async (events, cache) => {
          const index = Number(events[0]?.eventId.slice(4));
          started.push(index);
          // Fault injection around the real store: DynamoDB throttles this one write.
          if (index === failing) throw new TransientError("throttled", "ProvisionedThroughputExceeded");
          return real.applyEvents(events, cache);
        },
      },
    });

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: sequenceNumber(failing) }] });
    const calls = await stack.calls();
    for (let i = 0; i < failing; i++) expect(calls.has(`call-${i}`), `call-${i}`).toBe(true);
    expect(calls.has(`call-${failing}`)).toBe(false);
    // The rest of the failing key never starts. (That no record after it starts once the failure is
    // known is pinned exactly by the engine's step-clock test; here other keys may have started records
    // while the failed write was in flight.)
    for (const later of [25, 29, 33, 37]) expect(started).not.toContain(later);
    // Nothing is held: the retry from the checkpoint applies the rest at once.
    const retry = await processToolCallEvents(records.slice(failing), lambdaContext(), stack.deps());
    expect(retry.response.batchItemFailures).toEqual([]);
    expect((await stack.calls()).size).toBe(40);
  });

  it("the same batch delivered twice applies every effect once", async () => {
    const { records } = startedRecords(150, 10);
    const first = await processToolCallEvents(records, lambdaContext(), stack.deps());
    expect(first.summary.applied).toBe(150);
    expect(stack.toolCallWrites.byCommand()).toEqual({ BatchGetItemCommand: 2, PutItemCommand: 150 });
    stack.toolCallWrites.reset();
    stack.dedupeRequests.reset();

    const second = await processToolCallEvents(records, lambdaContext(), stack.deps());
    expect(second.summary).toMatchObject({ applied: 0, duplicates: 150 });
    expect(second.response).toEqual({ batchItemFailures: [] });
    // Redelivery costs the pre-read (ceil(150/100) BatchGetItem) and no write at all; the dedupe table
    // is not touched, on either delivery.
    expect(stack.toolCallWrites.byCommand()).toEqual({ BatchGetItemCommand: 2 });
    expect(stack.dedupeRequests.total()).toBe(0);
    for (const call of (await stack.calls()).values()) expect(call.version).toBe(1);
  });

  it("two overlapping batches run concurrently apply no effect twice", async () => {
    const { records } = startedRecords(120, 12);
    const a = records.slice(0, 80);
    const b = records.slice(40);
    const [ra, rb] = await Promise.all([
      processToolCallEvents(a, lambdaContext(), stack.deps()),
      processToolCallEvents(b, lambdaContext(), stack.deps()),
    ]);
    // Nothing is held by the other invocation, so nothing is reported for retry...
    expect(ra.response.batchItemFailures).toEqual([]);
    expect(rb.response.batchItemFailures).toEqual([]);
    // ...and each event was applied by exactly one of the two: the loser of a race on a call re-read it
    // (GetItem) and found its event already there.
    expect(ra.summary.applied + rb.summary.applied).toBe(120);
    expect(ra.summary.duplicates + rb.summary.duplicates).toBe(40);
    const calls = await stack.calls();
    expect(calls.size).toBe(120);
    for (const call of calls.values()) {
      expect(call.version).toBe(1);
      expect(call.recentEventIds).toHaveLength(1);
    }
    const counts = stack.toolCallWrites.byCommand();
    // One successful write per call; each lost race costs its failed write and one read.
    expect((counts.PutItemCommand ?? 0) - (counts.GetItemCommand ?? 0)).toBe(120);
  });

  it("remaining time running out mid-batch: reports the first unstarted record, every started record finished", async () => {
    const { records } = startedRecords(60, 6);
    let processed = 0;
    const deps = stack.deps({ concurrency: 3, deadlineMarginMs: 5_000 });
    const real = deps.toolCalls;
    // The invocation has 20 s, and each applied record "uses" one second of it.
    const context = lambdaContext({ remainingMs: () => 20_000 - processed * 1_000 });
    const { response, summary, outcome } = await processToolCallEvents(records, context, {
      ...deps,
      toolCalls: {
        prefetch: (ids) => real.prefetch(ids),
        applyEvents: async (events, cache) => {
          const folded = await real.applyEvents(events, cache);
          processed += 1;
          return folded;
        },
      },
    });

    expect(summary.deadlineReached).toBe(true);
    const firstUnstarted = outcome.outcomes.findIndex((o) => o.status === "not-started");
    expect(firstUnstarted).toBeGreaterThan(0);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: sequenceNumber(firstUnstarted) }] });
    const calls = await stack.calls();
    // Every started record finished, and it is in the table: nothing was cut off half-way.
    expect(calls.size).toBe(summary.applied);
    outcome.outcomes.forEach((o, i) => {
      expect(calls.has(`call-${i}`)).toBe(o.status === "succeeded");
    });
    for (let i = 0; i < firstUnstarted; i++) expect(outcome.outcomes[i]?.status).toBe("succeeded");
  });

  it("keeps going with per-record reads when the batch pre-read fails", async () => {
    const { records } = startedRecords(10, 2);
    const errors: unknown[] = [];
    const deps = stack.deps();
    const { response, summary } = await processToolCallEvents(records, lambdaContext(), {
      ...deps,
      toolCalls: {
        applyEvents: (e, c) => deps.toolCalls.applyEvents(e, c),
        prefetch: async () => Promise.reject(new Error("throttled")),
      },
      onPrefetchError: (e) => errors.push(e),
    });
    expect(errors).toHaveLength(1);
    expect(response.batchItemFailures).toEqual([]);
    expect(summary.applied).toBe(10);
  });

  it("keeps a permanent failure in the stream when the quarantine bucket is unavailable", async () => {
    const { records } = startedRecords(3, 1);
    records[1] = kinesisRecord({ partitionKey: "session-0", data: "not json", sequence: 1 });
    const { response } = await processToolCallEvents(
      records,
      lambdaContext(),
      stack.deps({ quarantine: async () => Promise.reject(new Error("NoSuchBucket")) }),
    );
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: sequenceNumber(1) }] });
  });

  it("1,000 lifecycle events over 300 calls: one write per call, at most 0.5 requests per new event and 0.03 per redelivered one", async () => {
    const { records, events, duplicates } = syntheticBatch();
    expect({ records: records.length, events: events.length, duplicates }).toEqual({
      records: 1_000,
      events: 950,
      duplicates: 50,
    });
    const first = await processToolCallEvents(records, lambdaContext(), stack.deps({ concurrency: 16 }));
    expect(first.response.batchItemFailures).toEqual([]);
    // Late events dominated by what their call already holds change nothing, and count as duplicates.
    expect(first.summary.applied + first.summary.duplicates).toBe(records.length);
    expect(first.summary.duplicates).toBeGreaterThanOrEqual(duplicates);
    expect(first.summary.applied).toBeGreaterThan(events.length - 2 * duplicates);
    expect(first.summary.failed).toBe(0);
    // ceil(300/100) pre-reads and one conditional write per call: 303 requests for 1,000 events.
    expect(stack.toolCallWrites.byCommand()).toEqual({ BatchGetItemCommand: 3, PutItemCommand: 300 });
    expect(stack.toolCallWrites.total() / records.length).toBeLessThanOrEqual(0.5);
    expect(stack.dedupeRequests.total()).toBe(0);
    stack.toolCallWrites.reset();

    const again = await processToolCallEvents(records, lambdaContext(), stack.deps({ concurrency: 16 }));
    expect(again.summary).toMatchObject({ applied: 0, duplicates: records.length, failed: 0 });
    expect(stack.toolCallWrites.byCommand()).toEqual({ BatchGetItemCommand: 3 });
    expect(stack.toolCallWrites.total() / records.length).toBeLessThanOrEqual(0.03);
  });

  it("a failed call write fails exactly that call's events: the checkpoint is its first record, and every record before it is applied", async () => {
    const { records, events } = lifecycleWorkload({
      calls: 30,
      sessions: 6,
      retryRate: 0.2,
      lateRate: 0.1,
      rng: seededRandom(3),
    });
    const victim = events[40]?.callId as string;
    const deps = stack.deps({ concurrency: 4 });
    const real = deps.toolCalls;
    const { response, outcome } = await processToolCallEvents(records, lambdaContext(), {
      ...deps,
      toolCalls: {
        prefetch: (ids) => real.prefetch(ids),
        applyEvents: async (run, cache) => {
          // Fault injection around the real store: DynamoDB throttles this one call's write.
          if (run[0]?.callId === victim)
            throw new TransientError("throttled", "ProvisionedThroughputExceeded");
          return real.applyEvents(run, cache);
        },
      },
    });
    const eventOf = (i: number) => {
      const decoded = decodeLifecycleEvent(records[i]?.kinesis.data ?? "");
      if (!decoded.ok) throw decoded.error;
      return decoded.value;
    };
    const callOf = (i: number) => eventOf(i).callId;
    const firstOfVictim = records.findIndex((_, i) => callOf(i) === victim);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: sequenceNumber(firstOfVictim) }] });
    // Only the victim's records failed; the others are done or were not started (after the checkpoint).
    outcome.outcomes.forEach((o, i) => {
      if (o.status === "failed") expect(callOf(i)).toBe(victim);
      if (i < firstOfVictim) expect(o.status).toBe("succeeded");
    });
    // Every record reported done is reflected in its call: folding it again changes nothing.
    const calls = await stack.calls();
    expect(calls.has(victim)).toBe(false);
    outcome.outcomes.forEach((o, i) => {
      if (o.status !== "succeeded") return;
      const stored = calls.get(callOf(i)) as ToolCallState;
      expect(["duplicate", "unchanged"]).toContain(applyEvent(stored, eventOf(i)).change);
    });
  });
});
