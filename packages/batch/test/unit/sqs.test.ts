import { sqsRecord } from "@mcp-pipeline/emulators/testing";
import type { SQSRecord } from "aws-lambda";
import { describe, expect, it } from "vitest";
import {
  ItemStatus,
  NotStartedReason,
  processSqsBatch,
  processSqsFifoBatch,
  sqsBatchResponse,
} from "../../src/index.js";
import { Permanent, StepClock, Transient } from "../harness.js";

const messages = (n: number): SQSRecord[] =>
  Array.from({ length: n }, (_, i) => sqsRecord({ messageId: `m-${i}`, body: `{"i":${i}}` }));

describe("SQS standard mode (docs/aws-semantics.md §2.3 'ReportBatchItemFailures on SQS')", () => {
  it("reports each transiently failed message by messageId and acknowledges the rest", async () => {
    const clock = new StepClock();
    const records = messages(10);
    const { result } = await clock.drive(
      processSqsBatch(records, {
        handle: clock.handler((_r, ctx) => {
          if (ctx.index === 2 || ctx.index === 7) throw new Transient();
        }),
        setAside: async () => undefined,
        concurrency: 4,
      }),
    );
    expect(sqsBatchResponse(result)).toEqual({
      batchItemFailures: [{ itemIdentifier: "m-2" }, { itemIdentifier: "m-7" }],
    });
    // A failure stops nothing else in a standard queue.
    expect(result.counts.succeeded).toBe(8);
    expect(clock.maxInFlight).toBe(4);
  });

  it("sets aside permanent failures (DLQ) and does not report them", async () => {
    const setAside: string[] = [];
    const outcome = await processSqsBatch(messages(3), {
      handle: async (_r, ctx) => {
        if (ctx.index === 1) throw new Permanent();
      },
      setAside: async (r) => {
        setAside.push(r.messageId);
      },
      concurrency: 3,
    });
    expect(setAside).toEqual(["m-1"]);
    expect(sqsBatchResponse(outcome)).toEqual({ batchItemFailures: [] });
  });

  it("reports a permanent failure the DLQ could not take, so SQS keeps it", async () => {
    const outcome = await processSqsBatch(messages(2), {
      handle: async (_r, ctx) => {
        if (ctx.index === 0) throw new Permanent();
      },
      setAside: async () => {
        throw new Error("SendMessage failed");
      },
      concurrency: 1,
    });
    expect(sqsBatchResponse(outcome)).toEqual({ batchItemFailures: [{ itemIdentifier: "m-0" }] });
  });

  it("reports every unstarted message when the deadline is reached (docs/architecture.md deadline rule)", async () => {
    const clock = new StepClock();
    const { result } = await clock.drive(
      processSqsBatch(messages(6), {
        handle: clock.handler(),
        setAside: async () => undefined,
        concurrency: 2,
        deadline: { reached: () => clock.now >= 1 },
      }),
    );
    expect(clock.started()).toEqual([0, 1]);
    expect(sqsBatchResponse(result).batchItemFailures.map((f) => f.itemIdentifier)).toEqual([
      "m-2",
      "m-3",
      "m-4",
      "m-5",
    ]);
  });
});

describe("SQS FIFO mode (docs/aws-semantics.md §3 'Partial failure guidance')", () => {
  // Three groups interleaved as SQS may deliver them; the failure is in the middle of group B.
  const layout = ["A", "B", "C", "A", "B", "C", "B", "A", "B", "C"];
  const fifo = (): SQSRecord[] =>
    layout.map((g, i) => sqsRecord({ messageId: `m-${i}`, body: `{"i":${i}}`, groupId: g }));

  it("reports the failed message and every later message of its group; other groups finish in order", async () => {
    const clock = new StepClock();
    const records = fifo();
    const failAt = 4; // the second message of group B
    const { result } = await clock.drive(
      processSqsFifoBatch(records, {
        handle: clock.handler((_r, ctx) => {
          if (ctx.index === failAt) throw new Transient();
        }),
        setAside: async () => undefined,
        concurrency: 3,
      }),
    );
    expect(sqsBatchResponse(result).batchItemFailures.map((f) => f.itemIdentifier)).toEqual([
      "m-4",
      "m-6",
      "m-8",
    ]);
    expect(result.outcomes[6]).toEqual({
      status: ItemStatus.NotStarted,
      reason: NotStartedReason.KeyStopped,
    });
    expect(clock.startOrderOf("group:A")).toEqual([0, 3, 7]);
    expect(clock.startOrderOf("group:C")).toEqual([2, 5, 9]);
    expect(clock.startOrderOf("group:B")).toEqual([1, 4]);
    for (const g of ["A", "B", "C"]) expect(clock.maxInFlightPerKey.get(`group:${g}`)).toBe(1);
  });

  it("continues a group past a permanent failure, which is set aside (it can never succeed)", async () => {
    const setAside: string[] = [];
    const outcome = await processSqsFifoBatch(fifo(), {
      handle: async (_r, ctx) => {
        if (ctx.index === 1) throw new Permanent();
      },
      setAside: async (r) => {
        setAside.push(r.messageId);
      },
      concurrency: 2,
    });
    expect(setAside).toEqual(["m-1"]);
    expect(sqsBatchResponse(outcome)).toEqual({ batchItemFailures: [] });
  });

  it("treats a message without MessageGroupId as a group of its own instead of failing the batch", async () => {
    const records = [
      sqsRecord({ messageId: "m-0", body: "{}" }),
      sqsRecord({ messageId: "m-1", body: "{}", groupId: "A" }),
    ];
    const seen: string[] = [];
    const outcome = await processSqsFifoBatch(records, {
      handle: async (_r, ctx) => {
        seen.push(ctx.key);
      },
      setAside: async () => undefined,
      concurrency: 2,
    });
    expect(seen.sort()).toEqual(["group:A", "message:m-0"]);
    expect(outcome.counts.succeeded).toBe(2);
  });
});
