import {
  GetRecordsCommand,
  GetShardIteratorCommand,
  type KinesisClient,
  ListShardsCommand,
  PutRecordsCommand,
} from "@aws-sdk/client-kinesis";
import {
  createStreamWhenActive,
  emulatorClientOptions,
  type FaultProxy,
  PutRecordsEntryError,
  type RunningEmulator,
  startKinesisEndpoint,
  startKinesisFaultProxy,
} from "@mcp-pipeline/emulators";
import { untilAborted } from "@mcp-pipeline/emulators/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  OrderingMode,
  type ProducerRecord,
  PUT_RECORDS_LIMITS,
  PutRecordsIncompleteError,
  planRequests,
  putAllRecords,
  putRecords,
  UNSENT_AFTER_GIVEN_UP,
} from "../../src/index.js";
import { kinesisClient } from "../../src/kinesis-client.js";

const utf8 = new TextEncoder();
const record = (key: string, body: string): ProducerRecord => ({
  partitionKey: key,
  data: utf8.encode(body),
});
const noSleep = async () => {};

type Entry = { Data: Uint8Array; PartitionKey: string };
type FakeAnswer = (entries: Entry[], request: number) => { ErrorCode?: string }[] | Error;

/** A fake SDK client: answers each PutRecords with per-entry results chosen by the test. */
function fakeKinesis(answer: FakeAnswer) {
  const requests: Entry[][] = [];
  let sequence = 0;
  const client = {
    send: async (command: PutRecordsCommand) => {
      const entries = command.input.Records as Entry[];
      requests.push(entries);
      const result = answer(entries, requests.length);
      if (result instanceof Error) throw result;
      return {
        FailedRecordCount: result.filter((r) => r.ErrorCode).length,
        Records: result.map((r) =>
          r.ErrorCode
            ? { ErrorCode: r.ErrorCode, ErrorMessage: "rejected" }
            : { ShardId: "shardId-000000000000", SequenceNumber: String(++sequence) },
        ),
      };
    },
  } as unknown as KinesisClient;
  return { client, requests };
}

describe("planRequests", () => {
  const keys = (n: number) => Array.from({ length: n }, (_, i) => i);

  it("cuts at 500 records a request", () => {
    const { requests } = planRequests(keys(1201), () => 10, String, PUT_RECORDS_LIMITS, "relaxed");
    expect(requests.map((r) => r.length)).toEqual([500, 500, 201]);
  });

  it("cuts before a record that would take the request over 5 MiB, partition keys counted", () => {
    // 6 records of 1 MiB minus 10 bytes: five fit in 5 MiB, the sixth starts the next request.
    const size = 1024 * 1024 - 10;
    const { requests } = planRequests(keys(6), () => size, String, PUT_RECORDS_LIMITS, "relaxed");
    expect(requests.map((r) => r.length)).toEqual([5, 1]);
  });

  it("in strict mode sends one record of a key per round and defers the rest in order", () => {
    const keyOf = (i: number) => (i < 3 ? "a" : "b");
    const plan = planRequests(keys(5), () => 1, keyOf, PUT_RECORDS_LIMITS, "strict");
    expect(plan.requests).toEqual([[0, 3]]);
    expect(plan.deferred).toEqual([1, 2, 4]);
  });
});

describe("putRecords with a faked client", () => {
  it("retries only the failed entries, in input order, with backoff and jitter", async () => {
    const fake = fakeKinesis((entries, request) =>
      entries.map((_, i) => (request === 1 && i % 2 === 1 ? { ErrorCode: "InternalFailure" } : {})),
    );
    const delays: number[] = [];
    const result = await putRecords(
      fake.client,
      { streamName: "events" },
      ["a", "b", "c", "d"].map((k) => record(k, k)),
      { random: () => 0.5, baseDelayMs: 100, sleep: async (ms) => void delays.push(ms) },
    );
    expect(fake.requests.map((r) => r.map((e) => e.PartitionKey))).toEqual([
      ["a", "b", "c", "d"],
      ["b", "d"],
    ]);
    expect(delays).toEqual([50]);
    expect(result.rejected).toEqual([]);
    expect(result.written.map((w) => [w.index, w.attempts])).toEqual([
      [0, 1],
      [1, 2],
      [2, 1],
      [3, 2],
    ]);
  });

  it("returns an oversized record as rejected without sending it, and sends the rest", async () => {
    const fake = fakeKinesis((entries) => entries.map(() => ({})));
    const big = { partitionKey: "k", data: new Uint8Array(PUT_RECORDS_LIMITS.maxRecordBytes) };
    const result = await putRecords(fake.client, { streamName: "events" }, [record("a", "1"), big]);
    expect(result.written.map((w) => w.index)).toEqual([0]);
    expect(result.rejected).toMatchObject([{ index: 1, errorCode: "RecordTooLarge", attempts: 0 }]);
    expect(fake.requests.flat()).toHaveLength(1);
  });

  it("gives up on an entry after maxAttempts and names it, with the last error", async () => {
    const fake = fakeKinesis((entries) =>
      entries.map((e) =>
        e.PartitionKey === "hot" ? { ErrorCode: "ProvisionedThroughputExceededException" } : {},
      ),
    );
    const records = [record("cold", "1"), record("hot", "2")];
    const options = { maxAttempts: 3, sleep: noSleep };
    const result = await putRecords(fake.client, { streamName: "events" }, records, options);
    expect(result.rejected).toMatchObject([
      { index: 1, errorCode: "ProvisionedThroughputExceededException", attempts: 3 },
    ]);
    expect(fake.requests).toHaveLength(3);
    const thrown = await putAllRecords(fake.client, { streamName: "events" }, records, options).catch(
      (e) => e,
    );
    expect(thrown).toBeInstanceOf(PutRecordsIncompleteError);
    expect(thrown.kind).toBe("transient");
    expect(thrown.rejected[0].record).toBe(records[1]);
  });

  it("does not retry a request the service refused for good (4xx), and returns all its records", async () => {
    const notFound = Object.assign(new Error("Stream events not found"), {
      name: "ResourceNotFoundException",
      $metadata: { httpStatusCode: 400 },
    });
    const fake = fakeKinesis(() => notFound);
    const result = await putRecords(
      fake.client,
      { streamName: "events" },
      [record("a", "1"), record("b", "2")],
      {
        sleep: noSleep,
      },
    );
    expect(fake.requests).toHaveLength(1);
    // Each record was carried by one request: that is its attempts, not the attempts it was allowed.
    expect(result.rejected.map((r) => [r.index, r.errorCode, r.attempts])).toEqual([
      [0, "ResourceNotFoundException", 1],
      [1, "ResourceNotFoundException", 1],
    ]);
  });

  it("in strict mode sends nothing of a key after a record refused for good, and returns those records unsent in order", async () => {
    const refused = Object.assign(new Error("Stream events not found"), {
      name: "ResourceNotFoundException",
      $metadata: { httpStatusCode: 400 },
    });
    // The first request (a0 and b0) is refused for good; later rounds would go through.
    const fake = fakeKinesis((entries, request) => (request === 1 ? refused : entries.map(() => ({}))));
    const records = [record("a", "a0"), record("b", "b0"), record("a", "a1"), record("a", "a2")];
    const result = await putRecords(fake.client, { streamName: "events" }, records, {
      ordering: OrderingMode.Strict,
      sleep: noSleep,
    });
    expect(fake.requests).toHaveLength(1);
    expect(result.written).toEqual([]);
    expect(result.rejected.map((r) => [r.index, r.errorCode, r.attempts])).toEqual([
      [0, "ResourceNotFoundException", 1],
      [1, "ResourceNotFoundException", 1],
      [2, UNSENT_AFTER_GIVEN_UP, 0],
      [3, UNSENT_AFTER_GIVEN_UP, 0],
    ]);
  });

  it("in strict mode does not send a key's records after an oversized one, but sends those before it", async () => {
    const fake = fakeKinesis((entries) => entries.map(() => ({})));
    const big = { partitionKey: "a", data: new Uint8Array(PUT_RECORDS_LIMITS.maxRecordBytes) };
    const records = [record("a", "a0"), big, record("a", "a2"), record("b", "b0")];
    const result = await putRecords(fake.client, { streamName: "events" }, records, {
      ordering: OrderingMode.Strict,
    });
    expect(result.written.map((w) => w.index)).toEqual([0, 3]);
    expect(result.rejected.map((r) => [r.index, r.errorCode])).toEqual([
      [1, "RecordTooLarge"],
      [2, UNSENT_AFTER_GIVEN_UP],
    ]);
    expect(fake.requests.flat().map((e) => new TextDecoder().decode(e.Data))).not.toContain("a2");
  });

  it("in relaxed mode still sends a key's later records after one is given up (the documented trade)", async () => {
    const fake = fakeKinesis((entries) =>
      entries.map((e) => (new TextDecoder().decode(e.Data) === "a0" ? { ErrorCode: "InternalFailure" } : {})),
    );
    const records = [record("a", "a0"), record("a", "a1")];
    const result = await putRecords(fake.client, { streamName: "events" }, records, {
      maxAttempts: 2,
      sleep: noSleep,
    });
    expect(result.written.map((w) => w.index)).toEqual([1]);
    expect(result.rejected.map((r) => [r.index, r.errorCode])).toEqual([[0, "InternalFailure"]]);
  });

  it("retries a whole request after a network error", async () => {
    const fake = fakeKinesis((entries, request) =>
      request === 1 ? new Error("socket hang up") : entries.map(() => ({})),
    );
    const result = await putRecords(fake.client, { streamName: "events" }, [record("a", "1")], {
      sleep: noSleep,
    });
    expect(fake.requests).toHaveLength(2);
    expect(result.written).toHaveLength(1);
  });
});

describe("putRecords with an abort signal (an invocation's deadline)", () => {
  it("a request that never answers is aborted, and nothing is sent after it: every record named rejected", async () => {
    const controller = new AbortController();
    const requests: Entry[][] = [];
    const client = {
      // Never answers on its own; rejects as the SDK does when the signal aborts.
      send: (command: PutRecordsCommand, options?: { abortSignal?: AbortSignal }) => {
        requests.push(command.input.Records as Entry[]);
        const signal = options?.abortSignal;
        if (!signal) return Promise.reject(new Error("sent without an abort signal"));
        return untilAborted(signal);
      },
    } as unknown as KinesisClient;

    const writing = putRecords(client, { streamName: "s" }, [record("a", "1"), record("b", "2")], {
      maxAttempts: 8,
      sleep: noSleep,
      signal: controller.signal,
    });
    // The request is out (the fake saw it) before the abort: nothing waits for a timer.
    await new Promise((r) => setImmediate(r));
    expect(requests).toHaveLength(1);
    controller.abort(new Error("the invocation's deadline"));
    const result = await writing;

    expect(requests).toHaveLength(1);
    expect(result.written).toEqual([]);
    expect(result.rejected.map((r) => [r.index, r.errorCode, r.attempts])).toEqual([
      [0, "AbortError", 1],
      [1, "AbortError", 1],
    ]);
    expect(result.rejected[0]?.errorMessage).toMatch(/the invocation's deadline/);
  });
});

describe("putRecords against kinesalite behind a proxy that throttles entries", () => {
  let kinesis: RunningEmulator;
  let proxy: FaultProxy;
  let direct: KinesisClient;
  let throughProxy: KinesisClient;
  let rejectRequests = 0;
  /** Bodies whose entries the proxy always fails, with the error code Kinesis would put in their slot. */
  const alwaysFail = new Map<string, PutRecordsEntryError>();

  beforeAll(async () => {
    kinesis = await startKinesisEndpoint();
    // The first `rejectRequests` PutRecords requests lose every third entry; later ones go through.
    proxy = await startKinesisFaultProxy(
      kinesis.endpoint,
      (e) => alwaysFail.get(e.data.toString()) ?? (e.request <= rejectRequests && e.position % 3 === 0),
    );
    direct = kinesisClient(emulatorClientOptions(kinesis));
    throughProxy = kinesisClient(emulatorClientOptions(proxy));
  });
  afterAll(async () => {
    await proxy?.stop();
    await kinesis?.stop();
  });

  async function readAll(streamName: string): Promise<{ key: string; body: string }[]> {
    const { Shards = [] } = await direct.send(new ListShardsCommand({ StreamName: streamName }));
    const out: { key: string; body: string }[] = [];
    for (const shard of Shards) {
      let { ShardIterator: iterator } = await direct.send(
        new GetShardIteratorCommand({
          StreamName: streamName,
          ShardId: shard.ShardId,
          ShardIteratorType: "TRIM_HORIZON",
        }),
      );
      while (iterator) {
        const page = await direct.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 10_000 }));
        for (const r of page.Records ?? []) {
          out.push({ key: r.PartitionKey ?? "", body: Buffer.from(r.Data ?? []).toString() });
        }
        if ((page.Records ?? []).length === 0) break;
        iterator = page.NextShardIterator;
      }
    }
    return out;
  }

  it("lands every record exactly once when part of each request is rejected", async () => {
    await createStreamWhenActive(direct, { StreamName: "relaxed", ShardCount: 3 });
    const records = Array.from({ length: 1_200 }, (_, i) => record(`session-${i % 40}`, `event-${i}`));
    rejectRequests = 3;
    const before = proxy.stats.putRecordsRequests;
    const result = await putRecords(throughProxy, { streamName: "relaxed" }, records, { baseDelayMs: 5 });

    expect(result.rejected).toEqual([]);
    expect(proxy.stats.rejectedEntries).toBeGreaterThan(0);
    // 1,200 records need three requests of at most 500; the retries of rejected entries come after.
    expect(proxy.stats.putRecordsRequests - before).toBeGreaterThan(3);
    const landed = (await readAll("relaxed")).map((r) => r.body).sort();
    expect(landed).toEqual(records.map((r) => new TextDecoder().decode(r.data)).sort());
  });

  it("in strict mode keeps every key's records in order despite rejected entries", async () => {
    await createStreamWhenActive(direct, { StreamName: "strict", ShardCount: 2 });
    const records = Array.from({ length: 60 }, (_, i) => record(`session-${i % 4}`, String(i)));
    rejectRequests = proxy.stats.putRecordsRequests + 6;
    const rejectedBefore = proxy.stats.rejectedEntries;
    const result = await putRecords(throughProxy, { streamName: "strict" }, records, {
      ordering: OrderingMode.Strict,
      baseDelayMs: 2,
    });
    expect(result.rejected).toEqual([]);
    expect(proxy.stats.rejectedEntries).toBeGreaterThan(rejectedBefore);
    const landed = await readAll("strict");
    expect(landed).toHaveLength(60);
    for (let k = 0; k < 4; k++) {
      const bodies = landed.filter((r) => r.key === `session-${k}`).map((r) => Number(r.body));
      expect(bodies).toEqual([...bodies].sort((a, b) => a - b));
      expect(bodies).toHaveLength(15);
    }
  });

  it("in strict mode stops a key at a record given up after its attempts, sends the other keys, and returns the rest of that key unsent in order", async () => {
    await createStreamWhenActive(direct, { StreamName: "strict-given-up", ShardCount: 2 });
    // session-0's third record (body 8) is throttled on every attempt; session-1's third record
    // (body 9) fails with InternalFailure on every attempt: both are partial failures of PutRecords.
    alwaysFail.set("8", PutRecordsEntryError.Throttled);
    alwaysFail.set("9", PutRecordsEntryError.InternalFailure);
    const records = Array.from({ length: 20 }, (_, i) => record(`session-${i % 4}`, String(i)));
    const result = await putRecords(throughProxy, { streamName: "strict-given-up" }, records, {
      ordering: OrderingMode.Strict,
      maxAttempts: 3,
      baseDelayMs: 1,
    });
    alwaysFail.clear();

    expect(
      result.rejected.map((r) => [Number(new TextDecoder().decode(r.record.data)), r.errorCode]),
    ).toEqual([
      [8, "ProvisionedThroughputExceededException"],
      [9, "InternalFailure"],
      [12, UNSENT_AFTER_GIVEN_UP],
      [13, UNSENT_AFTER_GIVEN_UP],
      [16, UNSENT_AFTER_GIVEN_UP],
      [17, UNSENT_AFTER_GIVEN_UP],
    ]);
    expect(result.rejected.slice(0, 2).map((r) => r.attempts)).toEqual([3, 3]);
    const landed = await readAll("strict-given-up");
    const bodiesOf = (key: string) => landed.filter((r) => r.key === key).map((r) => Number(r.body));
    expect(bodiesOf("session-0")).toEqual([0, 4]);
    expect(bodiesOf("session-1")).toEqual([1, 5]);
    expect(bodiesOf("session-2")).toEqual([2, 6, 10, 14, 18]);
    expect(bodiesOf("session-3")).toEqual([3, 7, 11, 15, 19]);

    // A rerun of what came back (after the fault) lands the key's records after its earlier ones, in order.
    const rerun = await putRecords(
      throughProxy,
      { streamName: "strict-given-up" },
      result.rejected.map((r) => r.record),
      { ordering: OrderingMode.Strict, baseDelayMs: 1 },
    );
    expect(rerun.rejected).toEqual([]);
    const after = await readAll("strict-given-up");
    expect(after.filter((r) => r.key === "session-0").map((r) => Number(r.body))).toEqual([0, 4, 8, 12, 16]);
    expect(after.filter((r) => r.key === "session-1").map((r) => Number(r.body))).toEqual([1, 5, 9, 13, 17]);
  });

  it("the fault proxy answers a partial failure as Kinesis does: HTTP 200, FailedRecordCount, an ErrorCode and ErrorMessage in each failed entry's slot", async () => {
    await createStreamWhenActive(direct, { StreamName: "partial", ShardCount: 1 });
    alwaysFail.set("t", PutRecordsEntryError.Throttled);
    alwaysFail.set("i", PutRecordsEntryError.InternalFailure);
    const answer = await throughProxy.send(
      new PutRecordsCommand({
        StreamName: "partial",
        Records: ["ok-1", "t", "ok-2", "i"].map((d) => ({ PartitionKey: "k", Data: utf8.encode(d) })),
      }),
    );
    alwaysFail.clear();
    expect(answer.FailedRecordCount).toBe(2);
    expect(answer.Records?.map((r) => r.ErrorCode ?? "ok")).toEqual([
      "ok",
      "ProvisionedThroughputExceededException",
      "ok",
      "InternalFailure",
    ]);
    expect(answer.Records?.[1]?.ErrorMessage).toMatch(/^Rate exceeded for shard/);
    expect(answer.Records?.[3]?.ErrorMessage).toBe("Internal service failure.");
    expect(answer.Records?.[0]).toMatchObject({ ShardId: "shardId-000000000000" });
    expect((await readAll("partial")).map((r) => r.body)).toEqual(["ok-1", "ok-2"]);
  });
});
