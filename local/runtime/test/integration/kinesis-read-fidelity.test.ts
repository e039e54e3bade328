import {
  CreateStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type KinesisClient,
  ListShardsCommand,
  PutRecordCommand,
  type ShardIteratorType,
  SplitShardCommand,
  waitUntilStreamExists,
} from "@aws-sdk/client-kinesis";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import {
  emulatorClientOptions,
  type RunningEmulator,
  startKinesis,
  startKinesisTrimProxy,
  TrimmedStart,
} from "@mcp-pipeline/emulators";
import {
  type KinesisFidelityProxy,
  KinesisOperation,
  KinesisRetryableError,
  startKinesisFidelityProxy,
} from "@mcp-pipeline/emulators/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KinesisEsmEvent, type KinesisEsmParameters, KinesisEventSource } from "../../src/index.js";
import { eventually, type Payload, RecordingFunction, stoppedAfterEach } from "../harness.js";

/**
 * The Kinesis ESM's read path against a Kinesis that answers the way AWS does where kinesalite is kinder:
 * shard iterators expire, and GetShardIterator / GetRecords can be throttled (the fidelity proxy of
 * @mcp-pipeline/emulators/testing in front of kinesalite).
 */
let kinesalite: RunningEmulator;
let proxy: KinesisFidelityProxy;
let kinesis: KinesisClient;
const running = stoppedAfterEach();
let streams = 0;

beforeAll(async () => {
  kinesalite = await startKinesis();
  proxy = await startKinesisFidelityProxy(kinesalite.endpoint);
  // No SDK-level retries: every injected failure reaches the event source, which must retry it itself.
  kinesis = kinesisClient({ ...emulatorClientOptions(proxy), maxAttempts: 1 });
});
afterAll(async () => {
  await proxy?.stop();
  await kinesalite?.stop();
});

const parameters: KinesisEsmParameters = {
  batchSize: 4,
  batchingWindowMs: 0,
  parallelizationFactor: 1,
  startingPosition: "TRIM_HORIZON",
  maximumRetryAttempts: 2,
  maximumRecordAgeMs: -1,
  bisectBatchOnFunctionError: false,
  reportBatchItemFailures: true,
};

async function createStream(shards = 1): Promise<{ name: string; arn: string }> {
  streams += 1;
  const name = `read-fidelity-${streams}`;
  await kinesis.send(new CreateStreamCommand({ StreamName: name, ShardCount: shards }));
  await waitUntilStreamExists({ client: kinesis, maxWaitTime: 120 }, { StreamName: name });
  return { name, arn: `arn:aws:kinesis:us-east-1:000000000000:stream/${name}` };
}

async function put(stream: string, items: readonly (Payload & { key?: string })[]): Promise<void> {
  for (const { key, ...payload } of items) {
    await kinesis.send(
      new PutRecordCommand({
        StreamName: stream,
        PartitionKey: key ?? "key",
        Data: new TextEncoder().encode(JSON.stringify(payload)),
      }),
    );
  }
}

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}` }));

function eventSource(
  stream: { name: string; arn: string },
  fn: { arn: string; invoke: RecordingFunction["invoke"] },
  events: KinesisEsmEvent[],
  client: KinesisClient = kinesis,
): KinesisEventSource {
  const esm = new KinesisEventSource({
    kinesis: client,
    streamName: stream.name,
    stream: {
      streamArn: stream.arn,
      region: "us-east-1",
      roleArn: "arn:aws:iam::000000000000:role/scripted",
    },
    function: fn,
    parameters,
    pollIntervalMs: 50,
    shardRefreshMs: 100,
    retryDelayMs: () => 10,
    readRetryDelayMs: () => 5,
    onEvent: (event) => events.push(event),
  });
  running.push(esm);
  return esm;
}

describe("shard iterator expiry (Kinesis API: an iterator expires 5 minutes after it is returned)", () => {
  it("after ExpiredIteratorException the poller reads on after the last record read: no record is invoked twice", async () => {
    const stream = await createStream();
    await put(stream.name, ids("r", 6));
    const fn = new RecordingFunction();
    running.push(fn);
    // The first invocation outlives the iterator the poller holds (as a 5-minute invocation would):
    // the read after it meets ExpiredIteratorException while r4 and r5 wait in the poller's buffer.
    let expired = false;
    const expiring = {
      arn: fn.arn,
      invoke: async (event: unknown) => {
        if (!expired) {
          expired = true;
          proxy.expireIterators();
        }
        return fn.invoke(event);
      },
    };
    const events: KinesisEsmEvent[] = [];
    const esm = eventSource(stream, expiring, events);
    esm.start();
    await eventually(() => expect(fn.seen.length).toBeGreaterThanOrEqual(6));
    await eventually(() => expect(esm.stats.expiredIterators).toBeGreaterThanOrEqual(1));

    // The renewed iterator goes on reading new records.
    await put(stream.name, ids("n", 2));
    await eventually(() => expect(fn.seen.length).toBeGreaterThanOrEqual(8));
    expect(fn.seen).toEqual([...ids("r", 6), ...ids("n", 2)].map((r) => r.id));
    expect(fn.invocations.slice(0, 2).map((i) => i.ids)).toEqual([
      ["r0", "r1", "r2", "r3"],
      ["r4", "r5"],
    ]);
    expect(proxy.stats.expiredIteratorAnswers).toBeGreaterThanOrEqual(1);
  });

  it("stopped while it renews an expired iterator, the poller invokes none of the records it holds", async () => {
    // A proxy of its own: its throttles are counted apart from the other tests'.
    const own = await startKinesisFidelityProxy(kinesalite.endpoint);
    const client = kinesisClient({ ...emulatorClientOptions(own), maxAttempts: 1 });
    try {
      const stream = await createStream();
      await put(stream.name, ids("r", 6));
      const fn = new RecordingFunction();
      running.push(fn);
      // The first invocation outlives the iterator, and no new iterator can be had: the poller holds r4
      // and r5 while it asks for one again and again.
      let expired = false;
      const expiring = {
        arn: fn.arn,
        invoke: async (event: unknown) => {
          if (!expired) {
            expired = true;
            own.expireIterators();
            own.failNext(KinesisOperation.GetShardIterator, 1_000_000);
          }
          return fn.invoke(event);
        },
      };
      const events: KinesisEsmEvent[] = [];
      const esm = eventSource(stream, expiring, events, client);
      esm.start();
      await eventually(() =>
        expect(events.some((e) => e.type === "read-error" && e.operation === "GetShardIterator")).toBe(true),
      );

      // Act
      await esm.stop();

      // Assert: what it held was never invoked, and the checkpoint stays after what was (§1.3).
      expect(esm.stats.expiredIterators).toBe(1);
      expect(fn.invocations.map((i) => i.ids)).toEqual([["r0", "r1", "r2", "r3"]]);
      expect(esm.finishedShards.size).toBe(0);
    } finally {
      client.destroy();
      await own.stop();
    }
  });

  it("the proxy expires an iterator by age: a lifetime of 0 ms is refused, a short one expires unused iterators", async () => {
    await expect(startKinesisFidelityProxy(kinesalite.endpoint, { iteratorLifetimeMs: 0 })).rejects.toThrow(
      RangeError,
    );
    let clock = 1_000_000;
    const aging = await startKinesisFidelityProxy(kinesalite.endpoint, {
      iteratorLifetimeMs: 300_000,
      now: () => clock,
    });
    try {
      const client = kinesisClient(emulatorClientOptions(aging));
      const stream = await createStream();
      const { GetShardIteratorCommand, GetRecordsCommand } = await import("@aws-sdk/client-kinesis");
      const { ShardIterator } = await client.send(
        new GetShardIteratorCommand({
          StreamName: stream.name,
          ShardId: "shardId-000000000000",
          ShardIteratorType: "TRIM_HORIZON",
        }),
      );
      clock += 299_000;
      const page = await client.send(new GetRecordsCommand({ ShardIterator }));
      expect(page.NextShardIterator).toBeDefined();
      clock += 2_000;
      await expect(client.send(new GetRecordsCommand({ ShardIterator }))).rejects.toMatchObject({
        name: "ExpiredIteratorException",
      });
      // NextShardIterator is a new iterator with its own lifetime.
      await expect(
        client.send(new GetRecordsCommand({ ShardIterator: page.NextShardIterator })),
      ).resolves.toMatchObject({ Records: [] });
    } finally {
      await aging.stop();
    }
  });
});

describe("the fidelity proxy's other answers", () => {
  it("refuses a bad count, injects the error asked for, passes upstream errors and iterators that are not its own", async () => {
    expect(() => proxy.failNext(KinesisOperation.ListShards, -1)).toThrow(RangeError);
    expect(() => proxy.failNext(KinesisOperation.ListShards, 1.5)).toThrow(RangeError);
    const stream = await createStream();
    const { GetShardIteratorCommand, GetRecordsCommand } = await import("@aws-sdk/client-kinesis");

    // An injected error: the one asked for, on the operation asked for, once.
    proxy.failNext(KinesisOperation.ListShards, 1, KinesisRetryableError.LimitExceeded);
    const before = proxy.stats.injected.ListShards ?? 0;
    await expect(kinesis.send(new ListShardsCommand({ StreamName: stream.name }))).rejects.toMatchObject({
      name: "LimitExceededException",
      message: "Rate exceeded for ListShards (injected by the fidelity proxy)",
    });
    await expect(kinesis.send(new ListShardsCommand({ StreamName: stream.name }))).resolves.toMatchObject({
      Shards: [expect.objectContaining({ ShardId: "shardId-000000000000" })],
    });
    expect(proxy.stats.injected.ListShards).toBe(before + 1);

    // The upstream's error, answered as it came, and no iterator issued.
    const issued = proxy.stats.issuedIterators;
    await expect(
      kinesis.send(
        new GetShardIteratorCommand({
          StreamName: `${stream.name}-missing`,
          ShardId: "shardId-000000000000",
          ShardIteratorType: "TRIM_HORIZON",
        }),
      ),
    ).rejects.toMatchObject({ name: "ResourceNotFoundException" });
    expect(proxy.stats.issuedIterators).toBe(issued);

    // An iterator kinesalite issued (not through the proxy) is passed on for kinesalite to judge.
    const direct = kinesisClient(emulatorClientOptions(kinesalite));
    try {
      const { ShardIterator } = await direct.send(
        new GetShardIteratorCommand({
          StreamName: stream.name,
          ShardId: "shardId-000000000000",
          ShardIteratorType: "TRIM_HORIZON",
        }),
      );
      await put(stream.name, ids("d", 1));
      const page = await kinesis.send(new GetRecordsCommand({ ShardIterator }));
      expect(page.Records?.map((r) => JSON.parse(new TextDecoder().decode(r.Data)).id)).toEqual(["d0"]);
      expect(proxy.stats.issuedIterators).toBe(issued);
    } finally {
      direct.destroy();
    }
  });
});

describe("the trim proxy: a shard trimmed up to a sequence number", () => {
  const shard = "shardId-000000000000";
  /** The ids GetRecords returns from an iterator of `type` (at `sequence`, if given), through `client`. */
  async function idsFrom(client: KinesisClient, stream: string, type: ShardIteratorType, sequence?: string) {
    const { ShardIterator } = await client.send(
      new GetShardIteratorCommand({
        StreamName: stream,
        ShardId: shard,
        ShardIteratorType: type,
        ...(sequence ? { StartingSequenceNumber: sequence } : {}),
      }),
    );
    const page = await client.send(new GetRecordsCommand({ ShardIterator }));
    return (page.Records ?? []).map((r) => JSON.parse(new TextDecoder().decode(r.Data)).id as string);
  }
  async function trimmedStream() {
    const stream = await createStream();
    const sequences: string[] = [];
    for (const id of ["t0", "t1", "t2", "t3"]) {
      const { SequenceNumber } = await kinesis.send(
        new PutRecordCommand({
          StreamName: stream.name,
          PartitionKey: "key",
          Data: new TextEncoder().encode(JSON.stringify({ id })),
        }),
      );
      sequences.push(SequenceNumber ?? "");
    }
    return { stream, sequences };
  }

  it("serves a start before the horizon from it, and hides what a reader already past it would read", async () => {
    const { stream, sequences } = await trimmedStream();
    const trim = await startKinesisTrimProxy(kinesalite.endpoint);
    const client = kinesisClient({ ...emulatorClientOptions(trim), maxAttempts: 1 });
    try {
      // An iterator handed out before the trim: its page loses the records now trimmed.
      const { ShardIterator } = await client.send(
        new GetShardIteratorCommand({
          StreamName: stream.name,
          ShardId: shard,
          ShardIteratorType: "TRIM_HORIZON",
        }),
      );
      trim.trim(stream.name, shard, sequences[2] ?? "");
      const page = await client.send(new GetRecordsCommand({ ShardIterator }));
      expect(page.Records?.map((r) => JSON.parse(new TextDecoder().decode(r.Data)).id)).toEqual(["t2", "t3"]);
      expect(trim.stats).toEqual({ trimmedIterators: 0, recordsHidden: 2 });

      expect(await idsFrom(client, stream.name, "AT_SEQUENCE_NUMBER", sequences[0])).toEqual(["t2", "t3"]);
      expect(await idsFrom(client, stream.name, "AFTER_SEQUENCE_NUMBER", sequences[0])).toEqual(["t2", "t3"]);
      expect(await idsFrom(client, stream.name, "TRIM_HORIZON")).toEqual(["t2", "t3"]);
      // At or after the horizon: as asked.
      expect(await idsFrom(client, stream.name, "AT_SEQUENCE_NUMBER", sequences[3])).toEqual(["t3"]);
      expect(await idsFrom(client, stream.name, "AFTER_SEQUENCE_NUMBER", sequences[2])).toEqual(["t3"]);
      expect(trim.stats).toEqual({ trimmedIterators: 2, recordsHidden: 2 });
    } finally {
      client.destroy();
      await trim.stop();
    }
  });

  it("invalid-argument: a sequence number before the horizon is refused as Kinesis documents; TRIM_HORIZON is served", async () => {
    const { stream, sequences } = await trimmedStream();
    const trim = await startKinesisTrimProxy(kinesalite.endpoint, {
      trimmedStart: TrimmedStart.InvalidArgument,
    });
    const client = kinesisClient({ ...emulatorClientOptions(trim), maxAttempts: 1 });
    try {
      trim.trim(stream.name, shard, sequences[2] ?? "");
      await expect(idsFrom(client, stream.name, "AT_SEQUENCE_NUMBER", sequences[1])).rejects.toMatchObject({
        name: "InvalidArgumentException",
        message: `StartingSequenceNumber ${sequences[1]} used in GetShardIterator on shard ${shard} in stream ${stream.name} is before the trim horizon (test trim proxy).`,
      });
      expect(await idsFrom(client, stream.name, "TRIM_HORIZON")).toEqual(["t2", "t3"]);
      expect(await idsFrom(client, stream.name, "AT_SEQUENCE_NUMBER", sequences[2])).toEqual(["t2", "t3"]);
      expect(trim.stats).toEqual({ trimmedIterators: 1, recordsHidden: 0 });
    } finally {
      client.destroy();
      await trim.stop();
    }
  });
});

describe("§1.3 'Before invocation': read errors are retried without limit and reported", () => {
  it("GetShardIterator throttled 25 times in a row: the parent shard and its children are still read, in order", async () => {
    const stream = await createStream();
    await put(stream.name, ids("parent", 3));
    const { Shards = [] } = await kinesis.send(new ListShardsCommand({ StreamName: stream.name }));
    await kinesis.send(
      new SplitShardCommand({
        StreamName: stream.name,
        ShardToSplit: Shards[0]?.ShardId,
        NewStartingHashKey: "170141183460469231731687303715884105728",
      }),
    );
    await waitUntilStreamExists({ client: kinesis, maxWaitTime: 120 }, { StreamName: stream.name });
    await put(
      stream.name,
      ids("child", 4).map((r, i) => ({ ...r, key: `k${i}` })),
    );
    const fn = new RecordingFunction();
    running.push(fn);
    const events: KinesisEsmEvent[] = [];
    const esm = eventSource(stream, fn, events);
    proxy.failNext(KinesisOperation.GetShardIterator, 25);
    proxy.failNext(KinesisOperation.GetRecords, 3);
    esm.start();
    await eventually(() => expect(fn.seen).toHaveLength(7));

    const lastParent = Math.max(...ids("parent", 3).map((r) => fn.seen.indexOf(r.id)));
    const firstChild = Math.min(...ids("child", 4).map((r) => fn.seen.indexOf(r.id)));
    expect(lastParent).toBeLessThan(firstChild);
    expect([...fn.seen].sort()).toEqual([...ids("parent", 3), ...ids("child", 4)].map((r) => r.id).sort());
    // Every failed call was reported, none was counted as an invocation attempt.
    const readErrors = events.filter((e) => e.type === "read-error");
    expect(readErrors.filter((e) => e.operation === "GetShardIterator")).toHaveLength(25);
    expect(readErrors.filter((e) => e.operation === "GetRecords")).toHaveLength(3);
    expect(readErrors.every((e) => e.errorName === "ProvisionedThroughputExceededException")).toBe(true);
    expect(esm.stats.readErrors).toBe(28);
    expect(proxy.stats.injected).toMatchObject({ GetShardIterator: 25, GetRecords: 3 });
    expect(esm.stats.retriedBatches).toBe(0);
    expect(esm.stats.discardedRecords).toBe(0);
  });
});
