import { ListShardsCommand, PutRecordsCommand, SplitShardCommand } from "@aws-sdk/client-kinesis";
import { waitForStreamActive } from "@mcp-pipeline/emulators";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getRecordsLimit } from "../../src/esm/kinesis/poller.js";
import {
  InvalidEsmOptionError,
  type KinesisEsmEvent,
  type KinesisEsmParameters,
  KinesisEventSource,
  type KinesisFailureRecord,
  laneOf,
  MAX_PAYLOAD_BYTES,
  PartialSplitAccounting,
} from "../../src/index.js";
import {
  Emulators,
  eventually,
  heldInvocation,
  KINESIS_TEST_PARAMETERS,
  type Payload,
  RecordingFunction,
  stoppedAfterEach,
} from "../harness.js";

let emulators: Emulators;
const running = stoppedAfterEach();
beforeAll(async () => {
  emulators = await Emulators.start();
});
afterAll(() => emulators?.stop());

async function setup(
  options: {
    parameters?: Partial<KinesisEsmParameters>;
    shards?: number;
    items?: (Payload & { key?: string })[];
    timeoutMs?: number;
    environment?: Record<string, string>;
    start?: boolean;
    /** The mapping's clock, for windows and record ages decided without waiting on a timer. */
    now?: () => number;
    partialSplitAccounting?: PartialSplitAccounting;
    retryDelayMs?: number;
    /** Called as each invocation begins, before the function runs: what the mapping holds at that moment. */
    beforeInvoke?: () => void;
    /** A stream made (and filled) by the test, when the function's environment needs its sequence numbers. */
    stream?: { name: string; arn: string };
  } = {},
) {
  const stream = options.stream ?? (await emulators.stream(options.shards ?? 1));
  const failures = await emulators.queue();
  const fn = new RecordingFunction({
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.environment ? { environment: options.environment } : {}),
  });
  const sequences = options.items ? await emulators.put(stream.name, options.items) : [];
  const events: KinesisEsmEvent[] = [];
  const esm = new KinesisEventSource({
    kinesis: emulators.kinesis,
    streamName: stream.name,
    stream: {
      streamArn: stream.arn,
      region: "us-east-1",
      roleArn: "arn:aws:iam::000000000000:role/scripted",
    },
    function: {
      arn: fn.arn,
      invoke: (event) => {
        options.beforeInvoke?.();
        return fn.invoke(event);
      },
    },
    parameters: { ...KINESIS_TEST_PARAMETERS, ...options.parameters },
    onFailure: { sqs: emulators.sqs, queueUrl: failures.url },
    pollIntervalMs: 50,
    shardRefreshMs: 100,
    retryDelayMs: () => options.retryDelayMs ?? 10,
    ...(options.now ? { now: options.now } : {}),
    ...(options.partialSplitAccounting ? { partialSplitAccounting: options.partialSplitAccounting } : {}),
    onEvent: (event) => events.push(event),
  });
  running.push(esm, fn);
  if (options.start !== false) esm.start();
  return { stream, failures, fn, esm, sequences, events };
}

const ids = (prefix: string, n: number, extra: Partial<Payload> = {}) =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, ...extra }));

describe("§1.1 polling, batching and starting position", () => {
  it("§1.1 BatchSize: 25 records in order, in batches of at most 10", async () => {
    const { fn } = await setup({ items: ids("r", 25) });
    await eventually(() => expect(fn.seen).toHaveLength(25));
    expect(fn.invocations.map((i) => i.ids.length)).toEqual([10, 10, 5]);
    expect(fn.seen).toEqual(ids("r", 25).map((r) => r.id));
  });

  it("§1.1 MaximumBatchingWindowInSeconds: records arriving within the window make one batch", async () => {
    // The mapping's clock stands still until the test moves it, so "within the window" does not
    // depend on how fast a loaded machine runs the puts.
    let clock = Date.now();
    const { stream, fn, esm } = await setup({ parameters: { batchingWindowMs: 1_500 }, now: () => clock });
    await emulators.put(stream.name, ids("w", 3));
    await eventually(() => expect(esm.stats.polledRecords).toBe(3));
    await emulators.put(stream.name, ids("x", 2));
    await eventually(() => expect(esm.stats.polledRecords).toBe(5));
    expect(fn.invocations).toHaveLength(0);
    clock += 1_500;
    await eventually(() => expect(fn.seen).toHaveLength(5));
    expect(fn.invocations.map((i) => i.ids.length)).toEqual([5]);
  });

  it("§1.1 a full batch is invoked before its window ends", async () => {
    const clock = Date.now();
    const { fn } = await setup({
      items: ids("full", 5),
      parameters: { batchSize: 5, batchingWindowMs: 300_000 },
      now: () => clock,
    });
    await eventually(() => expect(fn.seen).toHaveLength(5));
    expect(fn.invocations.map((i) => i.ids.length)).toEqual([5]);
  });

  it("§1.1 6 MB payload limit: a batch is cut before the serialised event would exceed 6 MB", async () => {
    const big = "y".repeat(700_000);
    const items = Array.from({ length: 10 }, (_, i) => ({ id: `big${i}`, pad: big }) as Payload);
    const { fn } = await setup({ items, timeoutMs: 30_000 });
    await eventually(() => expect(fn.seen).toHaveLength(10));
    expect(fn.invocations.length).toBeGreaterThan(1);
    // 700 kB of data is ~933 kB in base64: six records fit in 6 MB, seven do not.
    expect(fn.invocations.map((i) => i.ids.length)).toEqual([6, 4]);
    expect(6 * 933_400).toBeLessThan(MAX_PAYLOAD_BYTES);
  });

  it("§1.1 StartingPosition LATEST: records put before the mapping starts are not read", async () => {
    const { stream, fn, esm } = await setup({
      items: ids("old", 3),
      parameters: { startingPosition: "LATEST" },
      start: false,
    });
    esm.start();
    await eventually(() => expect(esm.openedShards.size).toBe(1));
    await emulators.put(stream.name, ids("new", 2));
    await eventually(() => expect(fn.seen).toEqual(["new0", "new1"]));
  });

  it("§1.1 checkpointing: the shard's checkpoint is the last record processed", async () => {
    const { fn, esm, sequences } = await setup({ items: ids("c", 4) });
    await eventually(() => expect(fn.seen).toHaveLength(4));
    await eventually(() => expect([...esm.checkpoints.values()]).toEqual([sequences.at(-1)]));
  });
});

describe("caught up: what a caller waits on instead of a quiet period", () => {
  it("caughtUpSince(t) holds once every record put before t was invoked and the shard then polled empty", async () => {
    const { esm, fn, stream } = await setup({ start: false });
    expect(esm.caughtUpSince(0)).toBe(false);
    esm.start();
    await eventually(() => expect(esm.caughtUpSince(0)).toBe(true));
    const held = await heldInvocation();
    await emulators.put(stream.name, [{ id: "k0", touch: held.started, awaitFile: held.release }]);
    const putAt = Date.now();
    await held.hasStarted();
    // Read and in its invocation: not caught up, however long it takes.
    expect(esm.caughtUpSince(putAt)).toBe(false);
    await held.letGo();
    await eventually(() => expect(esm.caughtUpSince(putAt)).toBe(true));
    expect(fn.invocations.map((i) => i.ids)).toEqual([["k0"]]);
  });
});

describe("§1.2 ParallelizationFactor", () => {
  it("§1.2 batches of one shard run concurrently and every partition key stays in order", async () => {
    const items = Array.from({ length: 40 }, (_, i) => ({
      id: `k${i % 8}-${i}`,
      key: `key-${i % 8}`,
      sleepMs: 50,
    }));
    const { fn } = await setup({ items, parameters: { parallelizationFactor: 4, batchSize: 5 } });
    await eventually(() => expect(fn.seen).toHaveLength(40));
    expect(fn.fn.stats.maxConcurrency).toBeGreaterThan(1);
    for (let k = 0; k < 8; k++) {
      const order = fn.seen.filter((id) => id.startsWith(`k${k}-`)).map((id) => Number(id.split("-")[1]));
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
  });
});

describe("§1.2 lanes run side by side", () => {
  it("§1.2 a lane retrying a failed batch does not hold the shard's other lanes", async () => {
    // Two keys in different lanes: one record that fails until its retries run out, and three batches of
    // the other key, all read in one GetRecords. Different keys of a shard run side by side (§1.2): the
    // other lane's batches go on while the failed one waits out its retries, instead of waiting for it.
    const keys = Array.from({ length: 40 }, (_, i) => `key-${i}`);
    const stuckKey = keys.find((k) => laneOf(k, 2) === 0) as string;
    const freeKey = keys.find((k) => laneOf(k, 2) === 1) as string;
    const items = [
      { id: "stuck", fail: "throw" as const, key: stuckKey },
      ...ids("free", 6).map((i) => ({ ...i, key: freeKey })),
    ];
    const { fn, failures } = await setup({
      items,
      parameters: {
        parallelizationFactor: 2,
        batchSize: 2,
        maximumRetryAttempts: 2,
        reportBatchItemFailures: false,
      },
      retryDelayMs: 1_000,
    });
    await eventually(async () => expect(await emulators.drain(failures.url)).toHaveLength(1), 15_000);
    await eventually(() => expect(fn.seen.filter((id) => id.startsWith("free"))).toHaveLength(6));
    // Invocations are recorded as they end: every batch of the free lane ended before the stuck record's
    // last attempt, which came two retry waits (2 s) after its first.
    const ended = fn.invocations.map((i) => i.ids.join(","));
    expect(ended.lastIndexOf("stuck")).toBeGreaterThan(ended.indexOf("free4,free5"));
  });
});

describe("§1.1 the shard is read while its lanes run", () => {
  it("§1.1 §1.2 records of another lane put after a lane began retrying are processed before that lane gives up", async () => {
    // Lambda keeps reading a shard while the function is behind (§1.1), and a lane's retries hold only its
    // own keys (§1.2). The stuck key's record fails every attempt (four, 1 s apart); records of a key in the
    // other lane put after its first attempt are read and invoked during those retries, not after them.
    const keys = Array.from({ length: 40 }, (_, i) => `key-${i}`);
    const stuckKey = keys.find((k) => laneOf(k, 2) === 0) as string;
    const freeKey = keys.find((k) => laneOf(k, 2) === 1) as string;
    const { fn, failures, esm, stream } = await setup({
      items: [
        { id: "stuck", fail: "throw" as const, key: stuckKey },
        { id: "early", key: freeKey },
      ],
      parameters: {
        parallelizationFactor: 2,
        batchSize: 2,
        maximumRetryAttempts: 3,
        reportBatchItemFailures: false,
      },
      retryDelayMs: 1_000,
    });
    await eventually(() => expect(fn.invocations.some((i) => i.ids.includes("stuck"))).toBe(true));

    // Act: put while the stuck record waits for its retries.
    const late = await emulators.put(
      stream.name,
      ids("late", 3).map((i) => ({ ...i, key: freeKey })),
    );

    // Assert
    await eventually(async () => expect(await emulators.drain(failures.url)).toHaveLength(1), 15_000);
    await eventually(() =>
      expect(fn.seen.filter((id) => id.startsWith("late"))).toEqual(["late0", "late1", "late2"]),
    );
    // Invocations are recorded as they end: the late records' ended before the stuck record's last attempt.
    const ended = fn.invocations.map((i) => i.ids);
    const lastLate = Math.max(
      ...["late0", "late1", "late2"].map((id) => ended.findIndex((b) => b.includes(id))),
    );
    expect(ended.filter((b) => b.includes("stuck"))).toHaveLength(4);
    expect(lastLate).toBeLessThan(ended.findLastIndex((b) => b.includes("stuck")));
    // The checkpoint moves in shard order across lanes (§1.4): past the late records once the stuck one is done.
    await eventually(() => expect([...esm.checkpoints.values()]).toEqual([late.at(-1)]));
  });

  it("§1.1 with a lane blocked the reader waits for room: what it holds stays within its bound, nothing is dropped", async () => {
    // The reader reads on while lanes invoke (§1.1) but holds at most one read's worth waiting before it
    // waits for room (a read adds at most its own answer): a lane blocked on a batch bounds what is read.
    const parameters = { parallelizationFactor: 2, batchSize: 10 };
    const limit = getRecordsLimit(parameters);
    const keys = Array.from({ length: 40 }, (_, i) => `key-${i}`);
    const blockedKey = keys.find((k) => laneOf(k, 2) === 0) as string;
    const held = await heldInvocation();
    const stream = await emulators.stream(1);
    const items = [
      { id: "held", touch: held.started, awaitFile: held.release },
      ...ids("r", 3 * limit - 1),
    ].map((payload) => ({
      PartitionKey: blockedKey,
      Data: new TextEncoder().encode(JSON.stringify(payload)),
    }));
    for (let i = 0; i < items.length; i += 500) {
      const put = await emulators.kinesis.send(
        new PutRecordsCommand({ StreamName: stream.name, Records: items.slice(i, i + 500) }),
      );
      expect(put.FailedRecordCount ?? 0).toBe(0);
    }
    const { fn, esm, events } = await setup({ stream, parameters });
    await held.hasStarted();
    // Reads come every poll interval (50 ms) while there is room; give them many times that.
    await eventually(() => expect(esm.stats.polledRecords).toBeGreaterThanOrEqual(limit));
    await new Promise((r) => setTimeout(r, 1_000));

    // Assert: the reader stopped at its bound while the lane stayed blocked.
    const reads = events.filter((e): e is Extract<KinesisEsmEvent, { type: "read" }> => e.type === "read");
    expect(fn.invocations).toHaveLength(0);
    // Fewer than `limit` waiting before each read, at most `limit` added by it; the stream's last records
    // were not read.
    expect(Math.max(...reads.map((r) => r.buffered))).toBeLessThan(2 * limit);
    expect(esm.stats.polledRecords).toBeLessThan(3 * limit);

    // Act: let the lane go; every record is invoked once, in order.
    await held.letGo();
    await eventually(() => expect(fn.seen).toHaveLength(3 * limit));
    expect(fn.seen).toEqual(["held", ...ids("r", 3 * limit - 1).map((i) => i.id)]);
  });
});

describe("§1.3 errors, retries, record age and bisecting", () => {
  it("§1.3 whole-batch retry, and MaximumRetryAttempts N gives N+1 invocations before the records are discarded", async () => {
    const { fn, failures } = await setup({
      items: [{ id: "a" }, { id: "poison", fail: "throw" }, { id: "b" }],
      parameters: { maximumRetryAttempts: 2, reportBatchItemFailures: false },
    });
    await eventually(async () => expect(await emulators.drain(failures.url)).toHaveLength(1));
    expect(fn.invocations.map((i) => i.ids)).toEqual([
      ["a", "poison", "b"],
      ["a", "poison", "b"],
      ["a", "poison", "b"],
    ]);
  });

  it("§1.6 the on-failure record has AWS's exact shape (RetryAttemptsExhausted, functionError Unhandled)", async () => {
    const { failures, sequences, stream, fn } = await setup({
      items: [{ id: "p1", fail: "throw" }, { id: "p2" }],
      parameters: { maximumRetryAttempts: 1 },
    });
    let records: unknown[] = [];
    await eventually(async () => {
      records = [...records, ...(await emulators.drain(failures.url))];
      expect(records).toHaveLength(1);
    });
    const record = records[0] as KinesisFailureRecord;
    expect(Object.keys(record)).toEqual([
      "requestContext",
      "responseContext",
      "version",
      "timestamp",
      "KinesisBatchInfo",
    ]);
    expect(record).toEqual({
      requestContext: {
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        functionArn: fn.arn,
        condition: "RetryAttemptsExhausted",
        approximateInvokeCount: 2,
      },
      responseContext: { statusCode: 200, executedVersion: "$LATEST", functionError: "Unhandled" },
      version: "1.0",
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      KinesisBatchInfo: {
        shardId: "shardId-000000000000",
        startSequenceNumber: sequences[0],
        endSequenceNumber: sequences[1],
        approximateArrivalOfFirstRecord: expect.stringMatching(/Z$/),
        approximateArrivalOfLastRecord: expect.stringMatching(/Z$/),
        batchSize: 2,
        streamArn: stream.arn,
      },
    });
  });

  it("§1.3 MaximumRecordAgeInSeconds discards per record (RecordAgeExceeded, no responseContext) and invokes the fresh ones", async () => {
    // The mapping reads the clock at the moment the fresh records were put: "old" is at least
    // 700 ms old then and the fresh ones about 0, however long the machine takes to read them.
    let clock = Number.POSITIVE_INFINITY;
    const { stream, fn, failures, esm } = await setup({
      items: [{ id: "old" }],
      parameters: { maximumRecordAgeMs: 500 },
      start: false,
      now: () => clock,
    });
    const oldPutBy = Date.now();
    await eventually(() => expect(Date.now()).toBeGreaterThan(oldPutBy + 700));
    await emulators.put(stream.name, ids("fresh", 5));
    clock = Date.now();
    esm.start();
    await eventually(() => expect(fn.seen).toHaveLength(5));
    expect(fn.seen).toEqual(ids("fresh", 5).map((r) => r.id));
    const [record] = (await emulators.drain(failures.url)) as KinesisFailureRecord[];
    expect(record?.requestContext).toMatchObject({
      condition: "RecordAgeExceeded",
      approximateInvokeCount: 1,
    });
    expect(record).not.toHaveProperty("responseContext");
    expect(record?.KinesisBatchInfo.batchSize).toBe(1);
  });

  it("§1.3 BisectBatchOnFunctionError: halves are retried, the poison record alone exhausts its retries, the rest succeed", async () => {
    const items = [...ids("g", 3), { id: "poison", fail: "throw" as const }, ...ids("h", 4)];
    const { fn, failures, esm } = await setup({
      items,
      parameters: { bisectBatchOnFunctionError: true, maximumRetryAttempts: 1 },
    });
    let records: KinesisFailureRecord[] = [];
    // The poison record's half comes first: its on-failure record is sent before the other half runs, so
    // the wait is for both.
    await eventually(async () => {
      records = [...records, ...((await emulators.drain(failures.url)) as KinesisFailureRecord[])];
      expect(records).toHaveLength(1);
      const succeeded = fn.invocations.filter((i) => i.result.kind === "ok").flatMap((i) => i.ids);
      expect(succeeded.sort()).toEqual([...ids("g", 3), ...ids("h", 4)].map((r) => r.id).sort());
    });
    // 8 -> 4 -> 2 -> 1: the splits use no retries, so the poison record alone gets 1 + 1 invocations.
    expect(fn.invocations.filter((i) => i.ids.length === 1 && i.ids[0] === "poison")).toHaveLength(2);
    expect(records[0]?.requestContext.approximateInvokeCount).toBe(2);
    expect(records[0]?.KinesisBatchInfo.batchSize).toBe(1);
    expect(esm.stats.bisections).toBe(3);
  });
});

describe("§1.4 ReportBatchItemFailures", () => {
  it("§1.4 checkpoint at the lowest failed sequence number: later records are retried, earlier ones are not", async () => {
    const items = [
      { id: "a" },
      { id: "b" },
      { id: "c", fail: "report" as const },
      { id: "d" },
      { id: "e", fail: "report" as const },
    ];
    const { fn, failures } = await setup({ items, parameters: { maximumRetryAttempts: 1 } });
    let records: KinesisFailureRecord[] = [];
    await eventually(async () => {
      records = [...records, ...((await emulators.drain(failures.url)) as KinesisFailureRecord[])];
      expect(records).toHaveLength(1);
    });
    expect(fn.invocations.map((i) => i.ids)).toEqual([
      ["a", "b", "c", "d", "e"],
      ["c", "d", "e"],
    ]);
    // With bisect off, partial failures count as retries; functionError is null when records were reported
    // (§1.4 "Bisect off", AWS-recorded).
    expect(records[0]?.requestContext.approximateInvokeCount).toBe(2);
    expect(records[0]?.responseContext?.functionError).toBeNull();
    expect(records[0]?.KinesisBatchInfo.batchSize).toBe(3);
  });

  it.each([
    '""',
    "null",
    "{}",
    "[]",
    '{"batchItemFailures":[]}',
    '{"batchItemFailures":null}',
    '{"batchItemFailure":[{"itemIdentifier":"1"}]}',
  ])("§1.4 complete success: the response %s gives one invocation and no retry", async (response) => {
    const { stream, fn, esm } = await setup({
      items: ids("s", 2),
      environment: { RESPONSE_OVERRIDE: response },
    });
    await eventually(() => expect(fn.seen).toHaveLength(2));
    // A shard's batches run in order and a retry comes before the next batch (§1.4): once a record
    // put afterwards is invoked, a retry of the first batch can no longer happen.
    await emulators.put(stream.name, [{ id: "after" }]);
    await eventually(() => expect(fn.seen).toContain("after"));
    expect(fn.invocations.map((i) => i.ids)).toEqual([["s0", "s1"], ["after"]]);
    expect(esm.stats.retriedBatches).toBe(0);
  });

  it.each([
    '{"batchItemFailures":[{"itemIdentifier":""}]}',
    '{"batchItemFailures":[{"itemIdentifier":null}]}',
    '{"batchItemFailures":[{"foo":123}]}',
    '{"batchItemFailures":[{"itemIdentifier":"123"}]}',
    '{"batchItemFailures":[{"itemIdentifier":123}]}',
  ])("§1.4 complete failure: the response %s retries the whole batch", async (response) => {
    const { fn, failures } = await setup({
      items: ids("f", 2),
      environment: { RESPONSE_OVERRIDE: response },
      parameters: { maximumRetryAttempts: 2 },
    });
    await eventually(async () => expect(await emulators.drain(failures.url)).toHaveLength(1));
    expect(fn.invocations.map((i) => i.ids)).toEqual([
      ["f0", "f1"],
      ["f0", "f1"],
      ["f0", "f1"],
    ]);
  });

  it("§1.4 without ReportBatchItemFailures the response is ignored", async () => {
    const { stream, fn, esm } = await setup({
      items: [{ id: "a", fail: "report" }],
      parameters: { reportBatchItemFailures: false },
    });
    await eventually(() => expect(fn.seen).toEqual(["a"]));
    await emulators.put(stream.name, [{ id: "after" }]);
    await eventually(() => expect(fn.seen).toEqual(["a", "after"]));
    expect(esm.stats.retriedBatches).toBe(0);
  });
});

describe("§1.4 bisect on: a partial answer splits the batch at the returned sequence number", () => {
  // a and b succeed, c is reported failed at every invocation, d is after it.
  const items = [{ id: "a" }, { id: "b" }, { id: "c", fail: "report" as const }, { id: "d" }];
  const drainOne = async (url: string) => {
    let records: KinesisFailureRecord[] = [];
    await eventually(async () => {
      records = [...records, ...((await emulators.drain(url)) as KinesisFailureRecord[])];
      expect(records).toHaveLength(1);
    });
    return records[0] as KinesisFailureRecord;
  };
  const splits = (events: KinesisEsmEvent[]) => events.filter((e) => e.type === "partial-split");
  /** The first answer (c failed) used the one retry: c and d get one more invocation, then are discarded. */
  const expectRetryUsedByTheFirstAnswer = async (fn: RecordingFunction, url: string, sequences: string[]) => {
    const record = await drainOne(url);
    expect(fn.invocations.map((i) => i.ids)).toEqual([
      ["a", "b", "c", "d"],
      ["c", "d"],
    ]);
    expect(record.requestContext.approximateInvokeCount).toBe(2);
    expect(record.KinesisBatchInfo).toMatchObject({ startSequenceNumber: sequences[2], batchSize: 2 });
  };

  it("split-free (the default): the split uses no retry, so the records after it get every invocation MaximumRetryAttempts allows", async () => {
    const { fn, failures, esm, events, sequences } = await setup({
      items,
      parameters: { bisectBatchOnFunctionError: true, maximumRetryAttempts: 1 },
    });
    const record = await drainOne(failures.url);
    // The split commits a and b; c and d then get 1 + 1 invocations of their own.
    expect(fn.invocations.map((i) => i.ids)).toEqual([
      ["a", "b", "c", "d"],
      ["c", "d"],
      ["c", "d"],
    ]);
    expect(record.requestContext).toMatchObject({
      condition: "RetryAttemptsExhausted",
      approximateInvokeCount: 2,
    });
    expect(record.responseContext?.functionError).toBeNull();
    expect(record.KinesisBatchInfo).toMatchObject({ startSequenceNumber: sequences[2], batchSize: 2 });
    expect(splits(events)).toEqual([
      { type: "partial-split", shardId: "shardId-000000000000", records: 4, retried: 2, attemptUsed: false },
    ]);
    expect(esm.stats).toMatchObject({
      partialSplits: 1,
      partialFailures: 3,
      retriedBatches: 1,
      bisections: 0,
    });
  });

  it("split-free: the rest of the batch is invoked at once, not after the retry wait (an hour here)", async () => {
    const { fn, failures } = await setup({
      items,
      parameters: { bisectBatchOnFunctionError: true, maximumRetryAttempts: 0 },
      retryDelayMs: 3_600_000,
    });
    const record = await drainOne(failures.url);
    expect(fn.invocations.map((i) => i.ids)).toEqual([
      ["a", "b", "c", "d"],
      ["c", "d"],
    ]);
    expect(record.requestContext.approximateInvokeCount).toBe(1);
  });

  it("counts-attempt: the split uses a retry, as a partial answer does with bisect off", async () => {
    const { fn, failures, esm, events, sequences } = await setup({
      items,
      parameters: { bisectBatchOnFunctionError: true, maximumRetryAttempts: 1 },
      partialSplitAccounting: PartialSplitAccounting.CountsAttempt,
    });
    await expectRetryUsedByTheFirstAnswer(fn, failures.url, sequences);
    expect(splits(events)).toEqual([
      { type: "partial-split", shardId: "shardId-000000000000", records: 4, retried: 2, attemptUsed: true },
    ]);
    expect(esm.stats).toMatchObject({ partialSplits: 1, partialFailures: 2, retriedBatches: 1 });
  });

  it.each([PartialSplitAccounting.SplitFree, PartialSplitAccounting.CountsAttempt])(
    "%s: a failure at the batch's first record splits nothing off and uses a retry",
    async (accounting) => {
      const { fn, failures, esm } = await setup({
        items: [{ id: "x", fail: "report" }, { id: "y" }],
        parameters: { bisectBatchOnFunctionError: true, maximumRetryAttempts: 1 },
        partialSplitAccounting: accounting,
      });
      const record = await drainOne(failures.url);
      expect(fn.invocations.map((i) => i.ids)).toEqual([
        ["x", "y"],
        ["x", "y"],
      ]);
      expect(record.requestContext.approximateInvokeCount).toBe(2);
      expect(record.KinesisBatchInfo.batchSize).toBe(2);
      expect(esm.stats.partialSplits).toBe(0);
    },
  );

  it("bisect off: a partial answer is no split, whatever the accounting says (§1.4, AWS-recorded)", async () => {
    const { fn, failures, esm, events, sequences } = await setup({
      items,
      parameters: { bisectBatchOnFunctionError: false, maximumRetryAttempts: 1 },
      partialSplitAccounting: PartialSplitAccounting.SplitFree,
    });
    await expectRetryUsedByTheFirstAnswer(fn, failures.url, sequences);
    expect(splits(events)).toEqual([]);
    expect(esm.stats.partialSplits).toBe(0);
  });

  it.each([
    ["bisect on, split-free", true, PartialSplitAccounting.SplitFree],
    ["bisect on, counts-attempt", true, PartialSplitAccounting.CountsAttempt],
    ["bisect off", false, PartialSplitAccounting.SplitFree],
  ])(
    "%s: a partial answer commits the records before the returned sequence number: the checkpoint is there before the rest is invoked again (§1.4 checkpoint rule)",
    async (_, bisect, accounting) => {
      const shard = "shardId-000000000000";
      const checkpointAtInvoke: (string | undefined)[] = [];
      let esmRef: KinesisEventSource | undefined;
      const { failures, esm, sequences } = await setup({
        items,
        parameters: { bisectBatchOnFunctionError: bisect, maximumRetryAttempts: 1 },
        partialSplitAccounting: accounting,
        beforeInvoke: () => checkpointAtInvoke.push(esmRef?.checkpoints.get(shard)),
      });
      esmRef = esm;
      await drainOne(failures.url);
      // a and b committed by the first answer; c and d then given up (the last records of the shard).
      expect(checkpointAtInvoke[0]).toBeUndefined();
      expect(checkpointAtInvoke.slice(1)).toEqual(checkpointAtInvoke.slice(1).map(() => sequences[1]));
      expect(checkpointAtInvoke.length).toBeGreaterThan(1);
      await eventually(() => expect(esm.checkpoints.get(shard)).toBe(sequences[3]));
    },
  );

  it("bisect on, a function error: the first half's success is committed before the second half is invoked", async () => {
    const shard = "shardId-000000000000";
    const checkpointAtInvoke: (string | undefined)[] = [];
    let esmRef: KinesisEventSource | undefined;
    const { fn, failures, esm, sequences } = await setup({
      items: [{ id: "a" }, { id: "b" }, { id: "c", fail: "throw" }, { id: "d" }],
      parameters: { bisectBatchOnFunctionError: true, maximumRetryAttempts: 0 },
      beforeInvoke: () => checkpointAtInvoke.push(esmRef?.checkpoints.get(shard)),
    });
    esmRef = esm;
    await drainOne(failures.url);
    // [a b c d] fails -> [a b] succeeds -> [c d] fails -> [c] fails, given up -> [d] succeeds.
    expect(fn.invocations.map((i) => i.ids)).toEqual([
      ["a", "b", "c", "d"],
      ["a", "b"],
      ["c", "d"],
      ["c"],
      ["d"],
    ]);
    expect(checkpointAtInvoke).toEqual([undefined, undefined, sequences[1], sequences[1], sequences[2]]);
    await eventually(() => expect(esm.checkpoints.get(shard)).toBe(sequences[3]));
  });

  it("several sequence numbers returned, the lowest listed last: the split is at the lowest", async () => {
    // The answer lists d before c: the batch is split at c, the lowest (§1.4 checkpoint rule).
    const stream = await emulators.stream();
    const sequences = await emulators.put(stream.name, [{ id: "a" }, { id: "b" }, { id: "c" }, { id: "d" }]);
    const { fn, failures, esm } = await setup({
      parameters: { bisectBatchOnFunctionError: true, maximumRetryAttempts: 0 },
      environment: {
        RESPONSE_OVERRIDE: JSON.stringify({
          batchItemFailures: [{ itemIdentifier: sequences[3] }, { itemIdentifier: sequences[2] }],
        }),
      },
      stream,
    });
    const record = await drainOne(failures.url);
    // Split at c (no retry used), then the rest answered at its first record, c: the one attempt.
    expect(fn.invocations.map((i) => i.ids)).toEqual([
      ["a", "b", "c", "d"],
      ["c", "d"],
    ]);
    expect(record.KinesisBatchInfo).toMatchObject({ startSequenceNumber: sequences[2], batchSize: 2 });
    expect(esm.stats.partialSplits).toBe(1);
  });

  it("split-free: the rest of a split batch is still held to MaximumRecordAgeInSeconds: records that aged while the split used no retry go to the destination, not to the function", async () => {
    // The mapping's clock moves 70 s during the first invocation: c and d are past their 60 s when the rest
    // would be invoked, with no attempt used and infinite retries.
    let offset = 0;
    const { fn, failures, esm } = await setup({
      items,
      parameters: { bisectBatchOnFunctionError: true, maximumRetryAttempts: -1, maximumRecordAgeMs: 60_000 },
      now: () => Date.now() + offset,
      beforeInvoke: () => {
        offset += 70_000;
      },
    });
    const record = await drainOne(failures.url);
    expect(fn.invocations.map((i) => i.ids)).toEqual([["a", "b", "c", "d"]]);
    expect(record.requestContext.condition).toBe("RecordAgeExceeded");
    expect(record.KinesisBatchInfo.batchSize).toBe(2);
    expect(esm.stats.partialSplits).toBe(1);
  });

  it.each([["free"], [""], [null], [1]])(
    "an unknown partialSplitAccounting (%j) is refused when the mapping is made, naming the accepted values",
    (value) => {
      const make = () =>
        new KinesisEventSource({
          kinesis: emulators.kinesis,
          streamName: "never-read",
          stream: {
            streamArn: "arn:aws:kinesis:us-east-1:000000000000:stream/never-read",
            region: "us-east-1",
            roleArn: "arn:aws:iam::000000000000:role/scripted",
          },
          function: {
            arn: "arn:aws:lambda:us-east-1:000000000000:function:none",
            invoke: () => Promise.reject(),
          },
          parameters: KINESIS_TEST_PARAMETERS,
          partialSplitAccounting: value as unknown as PartialSplitAccounting,
        });
      expect(make).toThrow(InvalidEsmOptionError);
      expect(make).toThrow(
        `partialSplitAccounting must be one of "split-free", "counts-attempt", got ${JSON.stringify(value)}`,
      );
    },
  );
});

describe("resharding (§9.1 item 1; §1.5 'Resharding')", () => {
  it("parent shards are read to their end before their children", async () => {
    const { stream, fn, esm } = await setup({ items: ids("parent", 6), start: false });
    const { Shards = [] } = await emulators.kinesis.send(new ListShardsCommand({ StreamName: stream.name }));
    const parent = Shards[0];
    await emulators.kinesis.send(
      new SplitShardCommand({
        StreamName: stream.name,
        ShardToSplit: parent?.ShardId,
        NewStartingHashKey: "170141183460469231731687303715884105728",
      }),
    );
    await waitForStreamActive(emulators.kinesis, stream.name);
    await emulators.put(
      stream.name,
      ids("child", 6).map((r, i) => ({ ...r, key: `k${i}` })),
    );
    esm.start();
    await eventually(() => expect(fn.seen).toHaveLength(12));
    const lastParent = Math.max(...ids("parent", 6).map((r) => fn.seen.indexOf(r.id)));
    const firstChild = Math.min(...ids("child", 6).map((r) => fn.seen.indexOf(r.id)));
    expect(lastParent).toBeLessThan(firstChild);
    expect(esm.finishedShards.has(parent?.ShardId ?? "")).toBe(true);
  });
});

describe("Lambda-like invocation", () => {
  it("the timeout is enforced: an overrunning invocation is a function error and its result is ignored", async () => {
    const { fn, failures } = await setup({
      items: [{ id: "slow", sleepMs: 600_000 }],
      timeoutMs: 300,
      parameters: { maximumRetryAttempts: 0 },
    });
    await eventually(async () => expect(await emulators.drain(failures.url)).toHaveLength(1));
    expect(fn.invocations[0]?.result).toMatchObject({
      kind: "function-error",
      errorType: "Sandbox.Timedout",
      timedOut: true,
      errorMessage: "Task timed out after 0.30 seconds",
    });
    expect(fn.fn.stats.timeouts).toBe(1);
  });

  it("the handler gets a context with getRemainingTimeInMillis and its own environment; memory is reported", async () => {
    const { fn } = await setup({
      items: [{ id: "ctx" }],
      timeoutMs: 5_000,
      environment: { SCRIPT_MARK: "set" },
    });
    await eventually(() => expect(fn.invocations).toHaveLength(1));
    const result = fn.invocations[0]?.result;
    if (result?.kind !== "ok") throw new Error("expected success");
    const response = JSON.parse(result.payload);
    expect(response.remainingMs).toBeGreaterThan(4_000);
    expect(response.remainingMs).toBeLessThanOrEqual(5_000);
    expect(response).toMatchObject({ functionName: "scripted", envSeen: "set" });
    expect(result.maxMemoryUsedMb).toBeGreaterThan(0);
  });
});

// Both written by a review of the reader beside the lanes; each failed before its fix (ee74233).
describe("the Kinesis mapping stops while a batch is retried", () => {
  it("§1.3 stop returns while a batch is being retried without limit (MaximumRetryAttempts -1)", async () => {
    // A poison record with MaximumRetryAttempts -1 (AWS's default) is retried until it expires. A stop
    // must not wait for that: the batch in retry is not done, the checkpoint stays before it and a mapping
    // started again reads it again (§1.3 at least once). The clock is the test's, so that the record can
    // be made to expire after the assertion and the mapping ends (else the afterEach stop would hang too).
    let clock = Date.now();
    const { fn, esm } = await setup({
      items: [{ id: "poison", fail: "throw" }],
      parameters: {
        maximumRetryAttempts: -1,
        maximumRecordAgeMs: 3_600_000,
        reportBatchItemFailures: false,
      },
      now: () => clock,
    });
    await eventually(() => expect(fn.invocations.length).toBeGreaterThanOrEqual(2));

    // Act: the stop against 50 more retries of the batch, counted, not timed (a busy machine slows both
    // alike). Retried every 10 ms, the batch reaches them within a second while a stop that ends the retries
    // returns after the invocation in flight.
    const atStop = fn.invocations.length;
    let outcome: "stopped" | "still retrying" | undefined;
    const stopped = esm.stop().then(() => {
      outcome ??= "stopped";
    });
    while (outcome === undefined) {
      if (fn.invocations.length >= atStop + 50) outcome = "still retrying";
      else await new Promise((r) => setTimeout(r, 10));
    }
    const attemptsAfterStop = fn.invocations.length - atStop;
    // Let the record expire so that the retries end and the test's own cleanup can stop the mapping.
    clock += 2 * 3_600_000;
    await stopped;

    // Assert
    expect(outcome, `${attemptsAfterStop} attempts after the stop began`).toBe("stopped");
  });
});

describe("the shard reader beside its lanes: bounded memory with a lane blocked", () => {
  it("§1.1 §1.2 with a lane blocked, the data read past the checkpoint stays within the bytes bound", async () => {
    // The reader waits for room once 12 MB a lane waits in the lanes (WAITING_BYTES_PER_LANE, two 6 MB
    // payloads) or four reads' worth of records is read past the checkpoint. Records another lane has done
    // stay held (with their data) until the blocked lane lets the checkpoint pass them, so the data held
    // past the checkpoint should stay within the bytes bound plus one read (Kinesis: 10 MB an answer), not
    // grow to four reads' worth of records of up to 1 MB each.
    const keys = Array.from({ length: 40 }, (_, i) => `key-${i}`);
    const blockedKey = keys.find((k) => laneOf(k, 2) === 0) as string;
    const freeKey = keys.find((k) => laneOf(k, 2) === 1) as string;
    const recordBytes = 500_000;
    const pad = "p".repeat(recordBytes);
    const held = await heldInvocation();
    const { stream, fn, esm, events } = await setup({
      items: [{ id: "held", touch: held.started, awaitFile: held.release, key: blockedKey }],
      parameters: { parallelizationFactor: 2, batchSize: 10 },
    });
    await held.hasStarted();
    // Six waves of 10 MB of the other lane's records (an AWS answer is at most 10 MB; kinesalite's is not
    // bounded in bytes, so each wave is put after the last was read): 60 MB in all. A wave not read
    // within 5 s is left unread: the reader waits for room.
    const perWave = 20;
    for (let wave = 0; wave < 6; wave++) {
      const before = esm.stats.polledRecords;
      await emulators.put(
        stream.name,
        Array.from({ length: perWave }, (_, i) => ({ id: `free${wave}-${i}`, pad, key: freeKey }) as Payload),
      );
      // Read and done by the free lane (so that what waits in the lanes stays under its own bound).
      const until = Date.now() + 5_000;
      const done = () => fn.seen.filter((id) => id.startsWith(`free${wave}-`)).length;
      while ((esm.stats.polledRecords < before + perWave || done() < perWave) && Date.now() < until)
        await new Promise((r) => setTimeout(r, 50));
    }

    // Assert: the checkpoint is held by the blocked lane, so everything read is past it.
    const readPastCheckpoint = esm.stats.polledRecords - 1;
    const heldBytes = readPastCheckpoint * recordBytes;
    const bound = 2 * 2 * MAX_PAYLOAD_BYTES + 10 * 1024 * 1024;
    const checkpointWhileBlocked = esm.checkpoints.get("shardId-000000000000");
    const reads = events.filter((e) => e.type === "read").length;
    const doneWhileBlocked = fn.seen.length;
    // Let the lane go before asserting, so that the mapping ends with every record done.
    await held.letGo();
    await eventually(() => expect(fn.seen).toHaveLength(1 + 6 * perWave));
    expect(checkpointWhileBlocked).toBeUndefined();
    expect(
      heldBytes,
      `read past the checkpoint in ${reads} reads, ${doneWhileBlocked} records done`,
    ).toBeLessThanOrEqual(bound);
  });
});
