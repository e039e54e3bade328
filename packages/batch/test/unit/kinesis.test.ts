import { kinesisRecord, sequenceNumber } from "@mcp-pipeline/emulators/testing";
import type { KinesisStreamRecord } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { ItemStatus, kinesisBatchResponse, NotStartedReason, processKinesisBatch } from "../../src/index.js";
import { Permanent, StepClock, Transient } from "../harness.js";

/** Records 0..n-1 whose partition keys follow `keys` (a string of key letters). */
function batch(keys: string): KinesisStreamRecord[] {
  return [...keys].map((key, i) => kinesisRecord({ partitionKey: key, data: { i }, sequence: i }));
}
const noSetAside = async (): Promise<void> => {
  throw new Error("nothing should be set aside here");
};

describe("Kinesis mode: key order and concurrency (docs/aws-semantics.md §1.2 'Ordering guarantee')", () => {
  it("runs each partition key strictly in shard order and keys concurrently within the cap", async () => {
    const clock = new StepClock();
    const records = batch("ABACBCAADDBC");
    const { result } = await clock.drive(
      processKinesisBatch(records, { handle: clock.handler(), setAside: noSetAside, concurrency: 3 }),
    );

    expect(result.counts.succeeded).toBe(records.length);
    expect(kinesisBatchResponse(result)).toEqual({ batchItemFailures: [] });
    for (const key of "ABCD") {
      const expected = records.flatMap((r, i) => (r.kinesis.partitionKey === key ? [i] : []));
      expect(clock.startOrderOf(key)).toEqual(expected);
      expect(clock.maxInFlightPerKey.get(key)).toBe(1);
    }
    expect(clock.maxInFlight).toBe(3);
  });

  it("never runs more than `concurrency` keys at once, even with one record per key", async () => {
    const clock = new StepClock();
    const records = batch("ABCDEFGHIJ");
    await clock.drive(
      processKinesisBatch(records, { handle: clock.handler(), setAside: noSetAside, concurrency: 4 }),
    );
    expect(clock.maxInFlight).toBe(4);
  });

  it("treats an empty batch as success with an explicit empty list", async () => {
    const outcome = await processKinesisBatch([], {
      handle: async () => undefined,
      setAside: noSetAside,
      concurrency: 2,
    });
    expect(JSON.stringify(kinesisBatchResponse(outcome))).toBe('{"batchItemFailures":[]}');
  });

  it.each([0, -1, 1.5, Number.NaN])("rejects concurrency %s with a RangeError", async (concurrency) => {
    expect(() =>
      processKinesisBatch(batch("A"), { handle: async () => undefined, setAside: noSetAside, concurrency }),
    ).toThrow(RangeError);
  });
});

describe("Kinesis mode: transient failure (§1.4 'Checkpoint rule': Lambda retries from the lowest reported sequence number)", () => {
  it("reports exactly the failed record, finishes every earlier record and starts nothing after it", async () => {
    const clock = new StepClock();
    //                     0123456789
    const records = batch("ABCABCABCA");
    const failAt = 4; // key B
    const { result } = await clock.drive(
      processKinesisBatch(records, {
        handle: clock.handler((_r, ctx) => {
          if (ctx.index === failAt) throw new Transient();
        }),
        setAside: noSetAside,
        concurrency: 3,
      }),
    );

    expect(kinesisBatchResponse(result)).toEqual({
      batchItemFailures: [{ itemIdentifier: sequenceNumber(failAt) }],
    });
    for (let i = 0; i < failAt; i++) expect(result.outcomes[i]?.status).toBe(ItemStatus.Succeeded);
    const failedAtStep = clock.events.find((e) => e.kind === "end" && e.index === failAt)?.at ?? -1;
    const startedAfterFailure = clock.events.filter(
      (e) => e.kind === "start" && e.at >= failedAtStep && e.index > failAt,
    );
    expect(startedAfterFailure).toEqual([]);
    // The rest of key B is never started; it is delivered again from the checkpoint.
    expect(result.outcomes[7]).toEqual({
      status: ItemStatus.NotStarted,
      reason: NotStartedReason.AfterFailure,
    });
  });

  it("reports the lowest sequence number when two keys fail", async () => {
    const clock = new StepClock();
    const records = batch("ABCDABCD");
    const { result } = await clock.drive(
      processKinesisBatch(records, {
        handle: clock.handler((_r, ctx) => {
          if (ctx.index === 6 || ctx.index === 5) throw new Transient();
        }),
        setAside: noSetAside,
        concurrency: 4,
      }),
    );
    expect(kinesisBatchResponse(result).batchItemFailures).toEqual([{ itemIdentifier: sequenceNumber(5) }]);
  });

  it("treats anything thrown that is not marked permanent (a string, a plain Error) as transient", async () => {
    for (const thrown of ["boom", new Error("socket hang up"), undefined]) {
      const outcome = await processKinesisBatch(batch("AB"), {
        handle: async (_r, ctx) => {
          if (ctx.index === 0) throw thrown;
        },
        setAside: noSetAside,
        concurrency: 1,
      });
      expect(outcome.outcomes[0]).toMatchObject({ status: ItemStatus.Failed, cause: "transient" });
      expect(kinesisBatchResponse(outcome).batchItemFailures).toEqual([
        { itemIdentifier: sequenceNumber(0) },
      ]);
    }
  });
});

describe("Kinesis mode: permanent failure (docs/architecture.md: quarantine and acknowledge, never block the shard)", () => {
  it("sets the record aside, acknowledges it and goes on with the same key", async () => {
    const clock = new StepClock();
    const setAside: KinesisStreamRecord[] = [];
    const records = batch("AAAB");
    const { result } = await clock.drive(
      processKinesisBatch(records, {
        handle: clock.handler((_r, ctx) => {
          if (ctx.index === 1) throw new Permanent();
        }),
        setAside: async (record, error) => {
          expect(error).toBeInstanceOf(Permanent);
          setAside.push(record);
        },
        concurrency: 2,
      }),
    );
    expect(setAside.map((r) => r.kinesis.sequenceNumber)).toEqual([sequenceNumber(1)]);
    expect(result.outcomes.map((o) => o.status)).toEqual([
      "succeeded",
      "set-aside",
      "succeeded",
      "succeeded",
    ]);
    expect(kinesisBatchResponse(result)).toEqual({ batchItemFailures: [] });
  });

  it("keeps a permanent failure in the stream when the quarantine cannot take it", async () => {
    const outcome = await processKinesisBatch(batch("AAB"), {
      handle: async (_r, ctx) => {
        if (ctx.index === 1) throw new Permanent();
      },
      setAside: async () => {
        throw new Error("S3 unavailable");
      },
      concurrency: 1,
    });
    expect(outcome.outcomes[1]).toMatchObject({ status: ItemStatus.Failed, cause: "set-aside-failed" });
    expect(kinesisBatchResponse(outcome).batchItemFailures).toEqual([{ itemIdentifier: sequenceNumber(1) }]);
  });
});

describe("Kinesis mode: deadline (docs/architecture.md: start nothing new when remaining time runs low)", () => {
  it("reports the first unstarted record once the deadline is reached and finishes every started record", async () => {
    const clock = new StepClock();
    const records = batch("ABCDABCDABCD");
    const { result } = await clock.drive(
      processKinesisBatch(records, {
        handle: clock.handler(),
        setAside: noSetAside,
        concurrency: 2,
        deadline: { reached: () => clock.now >= 3 },
      }),
    );
    const started = new Set(clock.started());
    const ended = new Set(clock.events.filter((e) => e.kind === "end").map((e) => e.index));
    expect(ended).toEqual(started);
    expect(clock.events.filter((e) => e.kind === "start" && e.at >= 3)).toEqual([]);
    const firstUnstarted = records.findIndex((_r, i) => !started.has(i));
    expect(firstUnstarted).toBeGreaterThan(0);
    expect(kinesisBatchResponse(result).batchItemFailures).toEqual([
      { itemIdentifier: sequenceNumber(firstUnstarted) },
    ]);
    expect(result.deadlineReached).toBe(true);
    expect(result.outcomes[firstUnstarted]).toEqual({
      status: "not-started",
      reason: NotStartedReason.Deadline,
    });
  });

  it("starts nothing when the deadline has already passed and reports the first record", async () => {
    const outcome = await processKinesisBatch(batch("AB"), {
      handle: async () => {
        throw new Error("must not run");
      },
      setAside: noSetAside,
      concurrency: 2,
      deadline: { reached: () => true },
    });
    expect(outcome.counts["not-started"]).toBe(2);
    expect(kinesisBatchResponse(outcome).batchItemFailures).toEqual([{ itemIdentifier: sequenceNumber(0) }]);
  });
});
