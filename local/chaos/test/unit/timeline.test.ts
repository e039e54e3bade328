import type { InvokeResult } from "@mcp-pipeline/local-runtime";
import { describe, expect, it } from "vitest";
import { Ledger, type StreamInput } from "../../src/ledger.js";
import { ProductionTimeline } from "../../src/timeline.js";

const record = (n: number): StreamInput => ({
  kind: "poison",
  key: "k",
  shardId: "shard-0",
  sequenceNumber: String(100 + n),
  event: undefined,
});
const ok: InvokeResult = { kind: "ok", payload: "", durationMs: 0, maxMemoryUsedMb: 0, requestId: "" };

describe("the production timeline (--timeline)", () => {
  it("times each chunk from its put to its records' first deliveries, and a shard's time into reading, invoking and waiting", () => {
    const ledger = new Ledger();
    const timeline = new ProductionTimeline();
    const t0 = 1_000_000;
    for (const n of [1, 2, 3, 4]) ledger.recordStream(record(n));
    timeline.chunk({
      chunk: 1,
      waitFrom: t0 + 100,
      putFrom: t0 + 600,
      putAt: t0 + 700,
      sentAt: t0 + 750,
      changedAt: t0 + 750,
      stream: [0, 4],
      jobs: [0, 0],
    });
    ledger.processorDelivered(
      [1, 2, 3].map((n) => ({ sequenceNumber: String(100 + n), data: undefined })),
      t0 + 900,
    );
    ledger.processorDelivered([{ sequenceNumber: "104", data: undefined }], t0 + 2_700);
    // Shard 0: read 0-100 ms, a round 100-1,100 ms, then 400 ms idle, read 1,500-1,600, a round to 2,600.
    const shard = "shard-0";
    timeline.onKinesisEvent({
      type: "read",
      shardId: shard,
      askedAt: t0,
      answeredAt: t0 + 100,
      records: 3,
      buffered: 3,
    });
    timeline.onKinesisEvent({ type: "round", shardId: shard, from: t0 + 100, at: t0 + 1_100, records: 3 });
    timeline.onKinesisEvent({
      type: "read",
      shardId: shard,
      askedAt: t0 + 1_500,
      answeredAt: t0 + 1_600,
      records: 1,
      buffered: 1,
    });
    timeline.onKinesisEvent({ type: "round", shardId: shard, from: t0 + 1_600, at: t0 + 2_600, records: 1 });

    const summary = timeline.summary(ledger, t0, t0 + 3_000, { processor: 2 });

    expect(summary.chunks).toEqual([
      expect.objectContaining({
        chunk: 1,
        waitedMs: 500,
        putAt: 600,
        putMs: 100,
        sendMs: 50,
        records: 4,
        delivered: 4,
        deliveredMs: { p50: 200, p90: 2_000, last: 2_000 },
      }),
    ]);
    expect(summary.shards[shard]).toEqual(
      expect.objectContaining({
        reads: 2,
        records: 4,
        readMs: 200,
        rounds: 2,
        roundMs: 2_000,
        waitingMs: 400,
        unreadAfterRecordsMs: { p50: 1_400, max: 1_400, total: 1_400 },
        unreadMaxMs: 1_400,
      }),
    );
  });

  it("a shard read while its lanes invoke: reading and invoking overlap, and only the time neither ran is waiting", () => {
    const timeline = new ProductionTimeline();
    const t0 = 1_000_000;
    const shard = "shard-0";
    const read = (askedAt: number, answeredAt: number, records: number) =>
      timeline.onKinesisEvent({
        type: "read",
        shardId: shard,
        askedAt,
        answeredAt,
        records,
        buffered: records,
      });
    // Reads at 0-100, 300-400 (during the round 100-1,000) and 1,500-1,600 (empty, then the poll interval).
    read(t0, t0 + 100, 5);
    timeline.onKinesisEvent({ type: "round", shardId: shard, from: t0 + 100, at: t0 + 1_000, records: 5 });
    read(t0 + 300, t0 + 400, 2);
    read(t0 + 1_500, t0 + 1_600, 0);

    const summary = timeline.summary(new Ledger(), t0, t0 + 2_000, {});

    expect(summary.shards[shard]).toEqual(
      expect.objectContaining({
        activeMs: 1_600,
        readMs: 300,
        roundMs: 900,
        waitingMs: 500,
        unreadAfterRecordsMs: { p50: 1_100, max: 1_100, total: 1_300 },
        unreadMaxMs: 1_100,
      }),
    );
  });

  it("counts a function's invocations in flight against its cap over the production phase", async () => {
    const timeline = new ProductionTimeline();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const invoke = timeline.wrapInvoke("tool-worker", async () => {
      await held;
      return ok;
    });
    const from = Date.now();
    const both = Promise.all([invoke({ Records: [1, 2] }), invoke({ Records: [3] })]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await both;
    const summary = timeline.summary(new Ledger(), from, Date.now(), { "tool-worker": 2 });
    expect(summary.functions["tool-worker"]).toEqual(
      expect.objectContaining({ invocations: 2, items: 3, cap: 2, maxInFlight: 2 }),
    );
    expect(summary.functions["tool-worker"]?.shareAtCap).toBeGreaterThan(0.5);
  });
});
