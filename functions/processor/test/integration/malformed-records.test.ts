import { captureOutput, lambdaContext, nestedObjects } from "@mcp-pipeline/emulators/testing";
import { UNKNOWN_PARTITION_KEY } from "@mcp-pipeline/recovery/quarantine";
import type { KinesisStreamRecord } from "aws-lambda";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { Stack, startedRecords } from "../stack.js";

/**
 * A record inside `Records` that lacks a field the processor reads, or holds the wrong type in one
 * (docs/aws-semantics.md §1.7), through the handler as Lambda calls it (the consumer shell, the core, the
 * quarantine wiring): it is that record's own permanent failure, quarantined as `malformed-record` with the
 * field named, and its neighbours are applied and acknowledged (issue 24: it used to throw a TypeError that
 * failed the whole batch, so every batch-mate spent a retry). A record whose sequence number cannot be read
 * cannot be quarantined under its key nor named in a response: the safe answer is the whole batch's
 * failure (§1.4), and its redelivery, or the on-failure destination's range, brings it back.
 */

let stack: Stack;
beforeAll(async () => {
  stack = await Stack.start();
});
afterAll(() => stack.stop());
beforeEach(() => stack.reset());
afterEach(() => vi.unstubAllEnvs());

async function freshHandler() {
  vi.resetModules();
  for (const [k, v] of Object.entries(stack.functionEnvironment())) vi.stubEnv(k, v);
  return (await import("../../src/handler.js")).handler as (
    event: unknown,
    context: unknown,
  ) => Promise<unknown>;
}

/** Three records of one partition key; the middle one is replaced by `malformed(it)`. */
function batchWith(malformed: (record: KinesisStreamRecord) => unknown) {
  const { records } = startedRecords(3, 1);
  const [before, middle, after] = records as [KinesisStreamRecord, KinesisStreamRecord, KinesisStreamRecord];
  return { before, middle, after, Records: [before, malformed(structuredClone(middle)), after] };
}

const without = (record: KinesisStreamRecord, field: keyof KinesisStreamRecord["kinesis"]) => {
  const { [field]: _dropped, ...kinesis } = record.kinesis;
  return { ...record, kinesis };
};
const withField = (record: KinesisStreamRecord, field: string, value: unknown) => ({
  ...record,
  kinesis: { ...record.kinesis, [field]: value },
});

describe("a malformed Kinesis record is its own failure, never its batch-mates'", () => {
  it.each([
    ["without kinesis.data", (r: KinesisStreamRecord) => without(r, "data"), "kinesis.data", "required"],
    [
      "with kinesis.data a number",
      (r: KinesisStreamRecord) => withField(r, "data", 42),
      "kinesis.data",
      "received number",
    ],
    [
      "with kinesis.data an object nested 10,000 levels",
      (r: KinesisStreamRecord) => withField(r, "data", JSON.parse(nestedObjects(10_000))),
      "kinesis.data",
      "received object",
    ],
    [
      "without kinesis.partitionKey",
      (r: KinesisStreamRecord) => without(r, "partitionKey"),
      "kinesis.partitionKey",
      "required",
    ],
  ])(
    "a record %s is quarantined as malformed-record naming the field; its neighbours are applied",
    async (_name, malformed, path, message) => {
      const handler = await freshHandler();
      const batch = batchWith(malformed);
      const { result, lines } = await captureOutput(() =>
        handler(
          { Records: batch.Records },
          lambdaContext({ timeoutMs: 30_000, functionName: "processor-dev" }),
        ),
      );

      expect(result).toEqual({ batchItemFailures: [] });
      const calls = await stack.calls();
      expect([...calls.keys()].sort()).toEqual(["call-0", "call-2"]);
      const quarantined = await stack.quarantined();
      expect(quarantined).toHaveLength(1);
      const [kept] = quarantined;
      expect(kept?.source.sequenceNumber).toBe(batch.middle.kinesis.sequenceNumber);
      expect(kept?.reason.code).toBe("malformed-record");
      expect(kept?.reason.details).toEqual({ issues: [{ path, message: expect.stringContaining(message) }] });
      // What the record had is kept; what it lacked is stood in for, never invented as data.
      const data = (batch.Records[1] as { kinesis: { data?: unknown } }).kinesis.data;
      expect(kept?.data).toBe(typeof data === "string" ? data : "");
      expect(kept?.source.partitionKey).toBe(
        path === "kinesis.partitionKey" ? UNKNOWN_PARTITION_KEY : batch.middle.kinesis.partitionKey,
      );
      expect(lines.find((l) => l._aws !== undefined)).toMatchObject({
        Records: 3,
        Applied: 2,
        Quarantined: 1,
        Failed: 0,
      });
      expect(lines.find((l) => l.message === "record quarantined")).toMatchObject({
        sequenceNumber: batch.middle.kinesis.sequenceNumber,
      });
    },
  );

  it("a record whose metadata is malformed (arrival, eventID, source ARN) but whose payload is good is applied; quarantined, it is dated by now", async () => {
    const handler = await freshHandler();
    const odd = (r: KinesisStreamRecord, data?: string) => ({
      ...withField(r, "approximateArrivalTimestamp", "yesterday"),
      eventID: 42,
      eventSourceARN: { nested: true },
      ...(data !== undefined
        ? { kinesis: { ...withField(r, "approximateArrivalTimestamp", "yesterday").kinesis, data } }
        : {}),
    });
    const { records } = startedRecords(2, 1);
    const [good, bad] = records as [KinesisStreamRecord, KinesisStreamRecord];
    const notJson = Buffer.from("{oops").toString("base64");
    const startedAt = Date.now();
    const { result, lines } = await captureOutput(() =>
      handler({ Records: [odd(good), odd(bad, notJson)] }, lambdaContext({ timeoutMs: 30_000 })),
    );
    expect(result).toEqual({ batchItemFailures: [] });
    expect([...(await stack.calls()).keys()]).toEqual(["call-0"]);
    const [kept] = await stack.quarantined();
    expect(kept).toMatchObject({
      data: notJson,
      reason: { code: "bad-json" },
      source: {
        streamArn: "unknown-stream",
        shardId: "unknown-shard",
        sequenceNumber: bad.kinesis.sequenceNumber,
      },
    });
    expect((kept?.source.approximateArrivalTimestamp ?? 0) * 1000).toBeGreaterThanOrEqual(startedAt - 1);
    expect(lines.find((l) => l._aws !== undefined)).toMatchObject({ Applied: 1, Quarantined: 1, Failed: 0 });
  });

  it.each([
    ["that is null", () => null],
    ["that is a string", () => "a record"],
    ["without kinesis", (r: KinesisStreamRecord) => ({ ...r, kinesis: undefined })],
    ["without kinesis.sequenceNumber", (r: KinesisStreamRecord) => without(r, "sequenceNumber")],
    [
      "with kinesis.sequenceNumber nested 10,000 levels",
      (r: KinesisStreamRecord) => withField(r, "sequenceNumber", JSON.parse(nestedObjects(10_000))),
    ],
  ])(
    "a record %s fails the whole batch with a clear error (no response can name it, §1.4), never a TypeError",
    async (_name, malformed) => {
      const handler = await freshHandler();
      const batch = batchWith(malformed);
      const run = captureOutput(() =>
        handler({ Records: batch.Records }, lambdaContext({ timeoutMs: 30_000 })),
      );
      await expect(run).rejects.toMatchObject({
        name: "InvalidBatchResponseError",
        message: expect.stringMatching(
          /^record 1 of the batch must be delivered again but has no readable kinesis\.sequenceNumber/,
        ),
      });
      // Nothing is acknowledged past it (the batch comes back whole); nothing is quarantined under a made-up key.
      expect(await stack.quarantined()).toEqual([]);
    },
  );
});
