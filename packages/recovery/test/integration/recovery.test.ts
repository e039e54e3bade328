import {
  type _Record,
  CreateStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type KinesisClient,
  PutRecordCommand,
  PutRecordsCommand,
  waitUntilStreamExists,
} from "@aws-sdk/client-kinesis";
import { GetObjectTaggingCommand, type S3Client } from "@aws-sdk/client-s3";
import {
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { DeadLetterAttribute } from "@mcp-pipeline/aws";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { sendToDeadLetterQueue, sqsClient } from "@mcp-pipeline/aws/sqs-client";
import {
  createBucketWhenReady,
  createQueueWhenReady,
  createStreamWhenActive,
  emulatorClientOptions,
  type RunningEmulator,
  startKinesis,
  startKinesisFaultProxy,
  startKinesisTrimProxy,
  startSqsLaggingCountProxy,
  startSqsS3,
  TrimmedStart,
  toSqsEventRecord,
} from "@mcp-pipeline/emulators";
import { kinesisFailureRecord, lambdaContext, sqsRecord } from "@mcp-pipeline/emulators/testing";
import { readQuarantineRecord, writeQuarantineRecord } from "@mcp-pipeline/recovery/quarantine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  countMessages,
  countQuarantine,
  coveringPrefixes,
  type FailureStoreDeps,
  type KinesisFailureRecord,
  type LostRange,
  listQuarantine,
  moveMessages,
  REPLAY_SEQUENCE,
  REPLAYED,
  ReplayIncompleteError,
  replayedAt,
  replayQuarantine,
  rereadRange,
  storedQuarantineKeys,
  storeFailureRecords,
} from "../../src/index.js";

let kinesisEmulator: RunningEmulator;
let sqsS3: RunningEmulator;
let kinesis: KinesisClient;
let s3: S3Client;
let sqs: SQSClient;
let n = 0;

beforeAll(async () => {
  // Streams stay CREATING for a while, as on AWS: every stream here is used only once ACTIVE.
  [kinesisEmulator, sqsS3] = await Promise.all([startKinesis({ createStreamMs: 200 }), startSqsS3()]);
  kinesis = kinesisClient(emulatorClientOptions(kinesisEmulator));
  s3 = s3Client(emulatorClientOptions(sqsS3));
  sqs = sqsClient(emulatorClientOptions(sqsS3));
});
afterAll(async () => {
  await Promise.all([kinesisEmulator?.stop(), sqsS3?.stop()]);
});

async function stream(records: { key: string; body: string }[]) {
  n += 1;
  const name = `failures-${n}`;
  await createStreamWhenActive(kinesis, { StreamName: name, ShardCount: 1 });
  const sequences: string[] = [];
  for (const r of records) {
    const put = await kinesis.send(
      new PutRecordCommand({ StreamName: name, PartitionKey: r.key, Data: new TextEncoder().encode(r.body) }),
    );
    sequences.push(put.SequenceNumber ?? "");
  }
  return { name, arn: `arn:aws:kinesis:us-east-1:000000000000:stream/${name}`, sequences };
}

async function bucket(): Promise<string> {
  n += 1;
  const name = `quarantine-${n}`;
  await createBucketWhenReady(s3, { Bucket: name });
  return name;
}

async function queue(name: string, fifo = false): Promise<string> {
  const { url } = await createQueueWhenReady(sqs, {
    QueueName: `${name}-${++n}${fifo ? ".fifo" : ""}`,
    Attributes: fifo ? { FifoQueue: "true" } : {},
  });
  return url;
}

function failure(arn: string, start: string, end: string, batchSize: number): KinesisFailureRecord {
  return kinesisFailureRecord({
    streamArn: arn,
    start,
    end,
    batchSize,
    lastArrival: "2026-11-30T09:59:01.000Z",
  });
}

function deps(quarantineBucket: string, dlqUrl: string, lost: LostRange[]): FailureStoreDeps {
  return {
    reread: (range) => rereadRange(kinesis, range),
    quarantine: (record) => writeQuarantineRecord(s3, quarantineBucket, record),
    deadLetter: (record, reason) => sendToDeadLetterQueue(sqs, dlqUrl, record, reason),
    onLost: (l) => lost.push(l),
    functionName: "dlq-redrive",
    concurrency: 4,
    putConcurrency: 16,
    deadlineMarginMs: 1_000,
  };
}

const message = (id: string, body: unknown) =>
  sqsRecord({ messageId: id, body: typeof body === "string" ? body : JSON.stringify(body) });

describe("rereadRange (docs/aws-semantics.md §1.6: the failure record holds only the range)", () => {
  it("reads back exactly the records from the start to the end sequence number", async () => {
    const s = await stream(Array.from({ length: 10 }, (_, i) => ({ key: `k${i % 3}`, body: `r${i}` })));
    const result = await rereadRange(kinesis, {
      streamArn: s.arn,
      shardId: "shardId-000000000000",
      start: s.sequences[3] ?? "",
      end: s.sequences[7] ?? "",
    });
    expect(result.gap).toBeUndefined();
    expect(result.records.map((r) => new TextDecoder().decode(r.Data))).toEqual([
      "r3",
      "r4",
      "r5",
      "r6",
      "r7",
    ]);
  });

  it("backs off and retries when GetRecords is throttled, and still reads the whole range", async () => {
    const s = await stream(Array.from({ length: 4 }, (_, i) => ({ key: "k", body: `t${i}` })));
    const proxy = await startKinesisFaultProxy(kinesisEmulator.endpoint, () => false, {
      throttleGetRecords: 2,
    });
    try {
      const throttled = kinesisClient({ ...emulatorClientOptions(proxy), maxAttempts: 1 });
      const result = await rereadRange(
        throttled,
        {
          streamArn: s.arn,
          shardId: "shardId-000000000000",
          start: s.sequences[0] ?? "",
          end: s.sequences[3] ?? "",
        },
        { sleep: async () => {} },
      );
      expect(proxy.stats.throttledGetRecords).toBe(2);
      expect(result.records).toHaveLength(4);
    } finally {
      await proxy.stop();
    }
  });

  it("renews an expired iterator after the last record read (at the start before any): each record once", async () => {
    const s = await stream(Array.from({ length: 4 }, (_, i) => ({ key: "k", body: `e${i}` })));
    const expiring = kinesisClient({ ...emulatorClientOptions(kinesisEmulator), maxAttempts: 1 });
    const iterators: string[] = [];
    let reads = 0;
    expiring.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === "GetShardIteratorCommand") {
          const input = args.input as { ShardIteratorType?: string; StartingSequenceNumber?: string };
          iterators.push(`${input.ShardIteratorType} ${input.StartingSequenceNumber}`);
        }
        // The first read and the one after the range's records expire, as an iterator left 5 minutes does.
        if (context.commandName === "GetRecordsCommand" && [1, 3].includes(++reads))
          throw Object.assign(new Error("Iterator expired"), { name: "ExpiredIteratorException" });
        return next(args);
      },
      { step: "initialize", name: "expireIterators" },
    );
    const result = await rereadRange(expiring, {
      streamArn: s.arn,
      shardId: "shardId-000000000000",
      start: s.sequences[0] ?? "",
      end: s.sequences[3] ?? "",
    });
    expect(result.gap).toBeUndefined();
    expect(result.records.map((r) => new TextDecoder().decode(r.Data))).toEqual(["e0", "e1", "e2", "e3"]);
    expect(iterators).toEqual([
      `AT_SEQUENCE_NUMBER ${s.sequences[0]}`,
      `AT_SEQUENCE_NUMBER ${s.sequences[0]}`,
      `AFTER_SEQUENCE_NUMBER ${s.sequences[3]}`,
    ]);
  });

  it("reports a shard the stream does not have as a gap naming the shard and the error", async () => {
    const s = await stream([{ key: "k", body: "only" }]);
    const result = await rereadRange(kinesis, {
      streamArn: s.arn,
      shardId: "shardId-000000000009",
      start: s.sequences[0] ?? "",
      end: s.sequences[0] ?? "",
    });
    expect(result.records).toEqual([]);
    expect(result.gap).toMatch(
      new RegExp(
        `^the stream no longer serves shardId-000000000009 at ${s.sequences[0]} \\(ResourceNotFoundException: `,
      ),
    );
  });

  it("reports a range the stream no longer holds as a gap, without throwing", async () => {
    const s = await stream([{ key: "k", body: "only" }]);
    // A sequence number of this shard's range that was never (or is no longer) served.
    const gone = "49000000000000000000000000000000000000000000000000000001";
    const result = await rereadRange(kinesis, {
      streamArn: s.arn,
      shardId: "shardId-000000000000",
      start: gone,
      end: gone,
    });
    expect(result.records).toEqual([]);
    expect(result.gap).toBeDefined();
  });
});

describe("dlq-redrive: failure records into the quarantine", () => {
  it("stores every record of the range with the failure context; the same failure record twice stores one copy", async () => {
    const s = await stream([
      { key: "session-1", body: '{"bad":' },
      { key: "session-2", body: "second" },
      { key: "session-1", body: "third" },
    ]);
    const q = await bucket();
    const dlq = await queue("failures-dlq");
    const lost: LostRange[] = [];
    const body = failure(s.arn, s.sequences[0] ?? "", s.sequences[2] ?? "", 3);
    const first = await storeFailureRecords([message("m1", body)], lambdaContext(), deps(q, dlq, lost));
    expect(first.response.batchItemFailures).toEqual([]);
    expect(first.summary).toMatchObject({ stored: 3, alreadyStored: 0, lost: 0 });

    const entries = await listQuarantine(s3, q);
    expect(entries.map((e) => Buffer.from(e.record.data, "base64").toString())).toEqual([
      '{"bad":',
      "second",
      "third",
    ]);
    const stored = await readQuarantineRecord(s3, q, entries[0]?.key ?? "");
    expect(stored).toMatchObject({
      source: {
        kind: "kinesis",
        streamArn: s.arn,
        shardId: "shardId-000000000000",
        sequenceNumber: s.sequences[0],
        partitionKey: "session-1",
      },
      reason: { code: "RetryAttemptsExhausted" },
      failure: { condition: "RetryAttemptsExhausted", approximateInvokeCount: 4, functionError: "Unhandled" },
      quarantinedBy: "dlq-redrive",
    });

    // Delivered again (SQS is at least once): still three objects, each stored once.
    await storeFailureRecords([message("m1", body)], lambdaContext(), deps(q, dlq, lost));
    expect(await listQuarantine(s3, q)).toHaveLength(3);
    expect(countQuarantine(entries)).toMatchObject({
      total: 3,
      byReason: { RetryAttemptsExhausted: 3 },
      byShard: { "shardId-000000000000": 3 },
    });
  });

  it("counts a range that the stream has trimmed as lost, names it, and does not crash", async () => {
    const s = await stream([{ key: "k", body: "x" }]);
    const q = await bucket();
    const dlq = await queue("failures-dlq");
    const lost: LostRange[] = [];
    const gone = "49000000000000000000000000000000000000000000000000000001";
    const { response, summary } = await storeFailureRecords(
      [message("m1", failure(s.arn, gone, gone, 5))],
      lambdaContext(),
      deps(q, dlq, lost),
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(summary.lost).toBe(5);
    expect(lost).toMatchObject([
      { lost: 5, condition: "RetryAttemptsExhausted", range: { start: gone, end: gone } },
    ]);
    expect(lost[0]?.reason).toMatch(/no longer|no record/);
  });

  it.each([
    ["not JSON", "{ nope", "bad-json"],
    ["JSON of another shape", { hello: "world" }, "schema-violation"],
    [
      "a record without KinesisBatchInfo.streamArn",
      { ...failure("x", "1", "2", 1), KinesisBatchInfo: { shardId: "s" } },
      "schema-violation",
    ],
  ])(
    "keeps a message that is %s in the failure queue's DLQ, with its reason, not reported",
    async (_label, body, code) => {
      const q = await bucket();
      const dlq = await queue("failures-dlq");
      const { response, summary } = await storeFailureRecords(
        [message("bad-1", body)],
        lambdaContext(),
        deps(q, dlq, []),
      );
      expect(response.batchItemFailures).toEqual([]);
      expect(summary.deadLettered).toBe(1);
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: dlq, MessageAttributeNames: ["All"] }),
      );
      expect(Messages[0]?.Body).toBe(typeof body === "string" ? body : JSON.stringify(body));
      expect(Messages[0]?.MessageAttributes?.[DeadLetterAttribute.ReasonCode]?.StringValue).toBe(code);
    },
  );

  it("reports a failure record whose records cannot be stored (bucket missing), to be retried", async () => {
    const s = await stream([{ key: "k", body: "x" }]);
    const dlq = await queue("failures-dlq");
    const { response } = await storeFailureRecords(
      [message("m9", failure(s.arn, s.sequences[0] ?? "", s.sequences[0] ?? "", 1))],
      lambdaContext(),
      deps("no-such-bucket", dlq, []),
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: "m9" }]);
  });
});

/** A stream created and ACTIVE, holding `count` records put in requests of 500. */
async function activeStream(count: number, keyOf: (i: number) => string) {
  n += 1;
  const name = `lanes-${n}`;
  await kinesis.send(new CreateStreamCommand({ StreamName: name, ShardCount: 1 }));
  await waitUntilStreamExists(
    { client: kinesis, maxWaitTime: 120, minDelay: 0.2, maxDelay: 1 },
    { StreamName: name },
  );
  const sequences: string[] = [];
  for (let from = 0; from < count; from += 500) {
    const entries = Array.from({ length: Math.min(500, count - from) }, (_, j) => ({
      PartitionKey: keyOf(from + j),
      Data: new TextEncoder().encode(`r${from + j}`),
    }));
    const put = await kinesis.send(new PutRecordsCommand({ StreamName: name, Records: entries }));
    if (put.FailedRecordCount) throw new Error(`${put.FailedRecordCount} records not put`);
    for (const r of put.Records ?? []) sequences.push(r.SequenceNumber ?? "");
  }
  return { name, arn: `arn:aws:kinesis:us-east-1:000000000000:stream/${name}`, sequences };
}

describe("coveringPrefixes", () => {
  it("gives per folder the common prefix of the smallest and largest key, so a LIST reads little beyond the range", () => {
    const folder = "kinesis/events/2026/11/30/shardId-000000000000/";
    expect(
      coveringPrefixes([
        `${folder}49650000000000000000000000000000000000000000000012.json`,
        `${folder}49650000000000000000000000000000000000000000000857.json`,
        "kinesis/events/2026/12/01/shardId-000000000000/49650000000000000000000000000000000000000000000901.json",
      ]),
    ).toEqual([
      `${folder}49650000000000000000000000000000000000000000000`,
      "kinesis/events/2026/12/01/shardId-000000000000/49650000000000000000000000000000000000000000000901.json",
    ]);
  });
});

describe("dlq-redrive with ParallelizationFactor > 1 (docs/aws-semantics.md §1.2, §1.6)", () => {
  it.each([TrimmedStart.ServeFromHorizon, TrimmedStart.InvalidArgument])(
    "counts a lane's trimmed first record as lost although other lanes' records fill the batch size (trimmed start answered as %s)",
    async (trimmedStart) => {
      // Three lanes share the shard; the failed lane's batch held 2 records (r0, r3) but its failure
      // record covers r0..r5 of the whole shard. Retention then trims r0.
      const s = await activeStream(6, (i) => `k${i % 3}`);
      const trimProxy = await startKinesisTrimProxy(kinesisEmulator.endpoint, { trimmedStart });
      try {
        trimProxy.trim(s.name, "shardId-000000000000", s.sequences[1] ?? "");
        const trimmed = kinesisClient(emulatorClientOptions(trimProxy));
        const q = await bucket();
        const lost: LostRange[] = [];
        const { response, summary } = await storeFailureRecords(
          [message("m1", failure(s.arn, s.sequences[0] ?? "", s.sequences[5] ?? "", 2))],
          lambdaContext(),
          { ...deps(q, await queue("failures-dlq"), lost), reread: (range) => rereadRange(trimmed, range) },
        );
        expect(response.batchItemFailures).toEqual([]);
        // What the stream still holds of the range is kept: five records, more than the batch size.
        expect(summary.stored).toBe(5);
        expect(summary.lost).toBeGreaterThanOrEqual(1);
        expect(lost).toHaveLength(1);
        expect(lost[0]).toMatchObject({
          range: { start: s.sequences[0] },
          condition: "RetryAttemptsExhausted",
        });
        expect(lost[0]?.reason).toMatch(/trimmed/);
        expect(trimProxy.stats.recordsHidden + trimProxy.stats.trimmedIterators).toBeGreaterThan(0);
      } finally {
        await trimProxy.stop();
      }
    },
  );

  it("stores a factor-4 x batch-200 failure record (800 records) with bounded concurrent PUTs; stopped by the deadline, the retry continues where it stopped", async () => {
    const s = await activeStream(800, (i) => `session-${i % 37}`);
    const q = await bucket();
    const dlq = await queue("failures-dlq");
    const body = failure(s.arn, s.sequences[0] ?? "", s.sequences[799] ?? "", 200);
    let puts = 0;
    let inFlight = 0;
    let maxInFlight = 0;
    let lists = 0;
    const counted = (base: FailureStoreDeps): FailureStoreDeps => ({
      ...base,
      putConcurrency: 16,
      quarantine: async (record) => {
        puts += 1;
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          return await base.quarantine(record);
        } finally {
          inFlight -= 1;
        }
      },
      storedKeys: (prefix) => {
        lists += 1;
        return storedQuarantineKeys(s3, q, prefix);
      },
    });

    // Attempt 1: the invocation's time runs out after 300 PUTs have started (a scripted clock).
    const first = await storeFailureRecords(
      [message("m1", body)],
      lambdaContext({ remainingMs: () => (puts < 300 ? 60_000 : 0) }),
      counted(deps(q, dlq, [])),
    );
    expect(first.response.batchItemFailures).toEqual([{ itemIdentifier: "m1" }]);
    const storedFirst = first.summary.stored;
    expect(storedFirst).toBeGreaterThanOrEqual(300);
    expect(storedFirst).toBeLessThan(800);
    expect(maxInFlight).toBeLessThanOrEqual(16);
    expect(maxInFlight).toBeGreaterThan(1);
    expect((await storedQuarantineKeys(s3, q, "kinesis/")).size).toBe(storedFirst);

    // Attempt 2 (SQS redelivers the reported message): only the rest is written.
    puts = 0;
    lists = 0;
    const second = await storeFailureRecords(
      [message("m1", body)],
      lambdaContext(),
      counted(deps(q, dlq, [])),
    );
    expect(second.response.batchItemFailures).toEqual([]);
    expect(second.summary).toMatchObject({ stored: 800 - storedFirst, alreadyStored: storedFirst, lost: 0 });
    expect(puts).toBe(800 - storedFirst);
    // The stored keys were found with one LIST of the range's key prefix, not one request per record.
    expect(lists).toBe(1);
    expect((await storedQuarantineKeys(s3, q, "kinesis/")).size).toBe(800);
  });
});

describe("replay", () => {
  it("puts records back with their partition keys; a second replay does nothing; filters narrow", async () => {
    const source = await stream([
      { key: "session-a", body: "a1" },
      { key: "session-b", body: "b1" },
      { key: "session-a", body: "a2" },
    ]);
    const q = await bucket();
    await storeFailureRecords(
      [message("m1", failure(source.arn, source.sequences[0] ?? "", source.sequences[2] ?? "", 3))],
      lambdaContext(),
      deps(q, await queue("dlq"), []),
    );
    const target = await stream([]);
    const onlyA = await listQuarantine(s3, q, { session: "session-a" });
    expect(onlyA).toHaveLength(2);
    expect(await replayQuarantine(s3, kinesis, q, onlyA, { streamName: target.name, dryRun: true })).toEqual({
      matched: 2,
      alreadyReplayed: 0,
      replayed: 0,
      toReplay: 2,
      givenUpAgain: 0,
      skippedPermanent: 0,
      leftByMax: 0,
      byReason: { RetryAttemptsExhausted: 2 },
      dryRun: true,
    });

    const written: string[] = [];
    const first = await replayQuarantine(s3, kinesis, q, await listQuarantine(s3, q), {
      streamName: target.name,
      ratePerSecond: 50,
      onWritten: (sequenceNumber) => written.push(sequenceNumber),
    });
    expect(first).toMatchObject({ matched: 3, replayed: 3, alreadyReplayed: 0 });
    expect(await replayedAt(s3, q, onlyA[0]?.key ?? "")).toMatch(/Z$/);
    // Marked by tags (what a lifecycle rule can select), the object itself unchanged.
    const tagged = await s3.send(new GetObjectTaggingCommand({ Bucket: q, Key: onlyA[0]?.key ?? "" }));
    expect(tagged.TagSet).toEqual(
      expect.arrayContaining([
        { Key: REPLAYED, Value: "true" },
        { Key: REPLAY_SEQUENCE, Value: written[0] },
      ]),
    );
    expect(await readQuarantineRecord(s3, q, onlyA[0]?.key ?? "")).toEqual(onlyA[0]?.record);
    const second = await replayQuarantine(s3, kinesis, q, await listQuarantine(s3, q), {
      streamName: target.name,
    });
    expect(second).toMatchObject({ matched: 3, replayed: 0, alreadyReplayed: 3 });

    const { ShardIterator } = await kinesis.send(
      new GetShardIteratorCommand({
        StreamName: target.name,
        ShardId: "shardId-000000000000",
        ShardIteratorType: "TRIM_HORIZON",
      }),
    );
    const back = await kinesis.send(new GetRecordsCommand({ ShardIterator }));
    // onWritten named each record put back by the sequence number the stream gave it.
    expect([...written].sort()).toEqual((back.Records ?? []).map((r) => r.SequenceNumber).sort());
    const landed = (back.Records ?? []).map((r) => [r.PartitionKey, new TextDecoder().decode(r.Data)]);
    // Each session's records in their original order (the producer's strict mode).
    expect(landed.filter(([k]) => k === "session-a")).toEqual([
      ["session-a", "a1"],
      ["session-a", "a2"],
    ]);
    expect(landed.filter(([k]) => k === "session-b")).toEqual([["session-b", "b1"]]);
    // The mark changes metadata only: the record itself is unchanged.
    expect((await readQuarantineRecord(s3, q, onlyA[0]?.key ?? "")).data).toBe(onlyA[0]?.record.data);
  });

  it("a still-poison record quarantined again after a replay is the same record: inspect counts it once, a replay leaves it (permanent) unless asked, and puts it back once per run asked", async () => {
    // Two records the processor quarantined as bad-json (its own write, §1.7 positions).
    const source = await stream([
      { key: "session-p", body: '{"bad":' },
      { key: "session-q", body: "not json either" },
    ]);
    const q = await bucket();
    const processorQuarantines = async (streamArn: string, r: _Record) =>
      writeQuarantineRecord(s3, q, {
        formatVersion: 1,
        source: {
          kind: "kinesis",
          streamArn,
          shardId: "shardId-000000000000",
          sequenceNumber: r.SequenceNumber ?? "",
          partitionKey: r.PartitionKey ?? "",
          approximateArrivalTimestamp: Date.now() / 1000,
        },
        data: Buffer.from(r.Data ?? new Uint8Array()).toString("base64"),
        reason: { code: "bad-json", message: "not JSON" },
        quarantinedAt: new Date().toISOString(),
        quarantinedBy: "processor",
      });
    const readStream = async (name: string) => {
      const { ShardIterator } = await kinesis.send(
        new GetShardIteratorCommand({
          StreamName: name,
          ShardId: "shardId-000000000000",
          ShardIteratorType: "TRIM_HORIZON",
        }),
      );
      return (await kinesis.send(new GetRecordsCommand({ ShardIterator }))).Records ?? [];
    };
    for (const r of await readStream(source.name)) await processorQuarantines(source.arn, r);
    expect(countQuarantine(await listQuarantine(s3, q, { reason: "bad-json" }))).toMatchObject({
      total: 2,
      copies: 0,
    });

    // bad-json is permanent: a replay leaves both unless asked.
    const target = await stream([]);
    const badJson = () => listQuarantine(s3, q, { reason: "bad-json" });
    expect(
      await replayQuarantine(s3, kinesis, q, await badJson(), { streamName: target.name }),
    ).toMatchObject({
      matched: 2,
      replayed: 0,
      skippedPermanent: 2,
    });
    // Asked (the processor was fixed, it is thought), it puts both back and marks them.
    expect(
      await replayQuarantine(s3, kinesis, q, await badJson(), {
        streamName: target.name,
        includePermanent: true,
      }),
    ).toMatchObject({ matched: 2, replayed: 2, alreadyReplayed: 0 });
    // The processor still cannot read them: quarantined again, under their new positions.
    for (const r of await readStream(target.name)) await processorQuarantines(target.arn, r);
    expect(countQuarantine(await badJson())).toMatchObject({
      total: 2,
      copies: 2,
      awaitingReplay: 2,
      byReason: { "bad-json": 2 },
    });
    // Given up again, still permanent: left unless asked; never reported as done.
    expect(
      await replayQuarantine(s3, kinesis, q, await badJson(), { streamName: target.name }),
    ).toMatchObject({
      matched: 2,
      replayed: 0,
      alreadyReplayed: 0,
      skippedPermanent: 2,
    });
    // Asked again, each is put back once more (one record, two objects, both marked).
    expect(
      await replayQuarantine(s3, kinesis, q, await badJson(), {
        streamName: target.name,
        includePermanent: true,
      }),
    ).toMatchObject({ matched: 2, replayed: 2, givenUpAgain: 2 });
    expect(countQuarantine(await badJson())).toMatchObject({ total: 2, awaitingReplay: 0, replayed: 2 });
    expect((await readStream(target.name)).map((r) => new TextDecoder().decode(r.Data)).sort()).toEqual(
      ['{"bad":', '{"bad":', "not json either", "not json either"].sort(),
    );
  });

  it("a valid record given up again after its replay is replayed again: nothing that failed becomes unreachable (issue 24, defect 2)", async () => {
    // The processor's event source gave up on a valid record (retries exhausted, §1.6): dlq-redrive
    // re-reads it into the quarantine.
    const source = await stream([{ key: "session-t", body: '{"valid":"event"}' }]);
    const q = await bucket();
    const dlq = await queue("dlq");
    await storeFailureRecords(
      [message("m1", failure(source.arn, source.sequences[0] ?? "", source.sequences[0] ?? "", 1))],
      lambdaContext(),
      deps(q, dlq, []),
    );
    const target = await stream([]);
    const first = await replayQuarantine(s3, kinesis, q, await listQuarantine(s3, q), {
      streamName: target.name,
    });
    expect(first).toMatchObject({ matched: 1, replayed: 1, alreadyReplayed: 0 });

    // The downstream fails again: the event source gives up on the replayed record too, and dlq-redrive
    // quarantines it under its new position (same partition key and bytes: the same record).
    const { ShardIterator } = await kinesis.send(
      new GetShardIteratorCommand({
        StreamName: target.name,
        ShardId: "shardId-000000000000",
        ShardIteratorType: "TRIM_HORIZON",
      }),
    );
    const replayedRecord = (await kinesis.send(new GetRecordsCommand({ ShardIterator }))).Records?.[0];
    const sequence = replayedRecord?.SequenceNumber ?? "";
    await storeFailureRecords(
      [message("m2", failure(target.arn, sequence, sequence, 1))],
      lambdaContext(),
      deps(q, dlq, []),
    );
    const entries = await listQuarantine(s3, q);
    expect(entries).toHaveLength(2);
    expect(countQuarantine(entries)).toMatchObject({ total: 1, copies: 1 });

    // Once the cause is fixed, the same replay puts it back again: it is not "already replayed".
    const second = await replayQuarantine(s3, kinesis, q, entries, { streamName: target.name });
    expect(second).toMatchObject({ matched: 1, replayed: 1, alreadyReplayed: 0 });
    const after = await kinesis.send(new GetRecordsCommand({ ShardIterator }));
    expect((after.Records ?? []).map((r) => [r.PartitionKey, new TextDecoder().decode(r.Data)])).toEqual([
      ["session-t", '{"valid":"event"}'],
      ["session-t", '{"valid":"event"}'],
    ]);
    // And then it is done: a third run finds every object of the record marked.
    const third = await replayQuarantine(s3, kinesis, q, await listQuarantine(s3, q), {
      streamName: target.name,
    });
    expect(third).toMatchObject({ matched: 1, replayed: 0, alreadyReplayed: 1 });
  });

  it("a stream that is not there ends the replay before any mark, naming the stream and what to do", async () => {
    const source = await stream([
      { key: "k", body: "a" },
      { key: "k", body: "b" },
    ]);
    const q = await bucket();
    await storeFailureRecords(
      [message("m1", failure(source.arn, source.sequences[0] ?? "", source.sequences[1] ?? "", 2))],
      lambdaContext(),
      deps(q, await queue("dlq"), []),
    );
    const entries = await listQuarantine(s3, q);
    const error = await replayQuarantine(s3, kinesis, q, entries, { streamName: "no-such-stream" }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ReplayIncompleteError);
    expect(error).toMatchObject({ replayed: 0, remaining: 2, unmarked: 0, interrupted: false });
    expect((error as Error).message).toMatch(/^2 records were not put back \(first: ResourceNotFound/);
    expect((error as ReplayIncompleteError).advice).toBe(
      "The stream no-such-stream is not there: check --stream (a dry run checks it), then run again.",
    );
    const after = await listQuarantine(s3, q);
    expect(after.filter((e) => e.replayedAt !== undefined)).toHaveLength(0);
  });

  it("marks the records of a chunk at once, and a mark refused mid-chunk counts exactly the records left unmarked", async () => {
    // 40 records of one chunk; S3 refuses the mark of one of them (a transient 503 on PutObjectTagging).
    const source = await stream(Array.from({ length: 40 }, (_, i) => ({ key: `k${i % 4}`, body: `r${i}` })));
    const q = await bucket();
    await storeFailureRecords(
      [message("m1", failure(source.arn, source.sequences[0] ?? "", source.sequences[39] ?? "", 40))],
      lambdaContext(),
      deps(q, await queue("dlq"), []),
    );
    const entries = await listQuarantine(s3, q);
    expect(entries).toHaveLength(40);
    const refusedKey = entries[20]?.key ?? "";
    let inFlight = 0;
    let mostInFlight = 0;
    const marking = s3Client({ ...emulatorClientOptions(sqsS3), maxAttempts: 1 });
    marking.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== "PutObjectTaggingCommand") return next(args);
        inFlight += 1;
        mostInFlight = Math.max(mostInFlight, inFlight);
        try {
          if ((args.input as { Key?: string }).Key === refusedKey)
            throw Object.assign(new Error("Please reduce your request rate."), { name: "SlowDown" });
          return await next(args);
        } finally {
          inFlight -= 1;
        }
      },
      { step: "initialize", name: "countMarksInFlight" },
    );
    const target = await stream([]);
    const written: string[] = [];
    const error = await replayQuarantine(marking, kinesis, q, entries, {
      streamName: target.name,
      ratePerSecond: 1_000,
      onWritten: (sequenceNumber) => written.push(sequenceNumber),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplayIncompleteError);
    const incomplete = error as ReplayIncompleteError;
    // Marks overlap: the replay is not bounded by one S3 round trip per record.
    expect(mostInFlight).toBeGreaterThan(1);
    // What the bucket holds is the witness: every record is in the stream; the marked ones are those the
    // error says were marked, and the rest are counted as put back but unmarked.
    const after = await listQuarantine(s3, q);
    const markedInBucket = after.filter((e) => e.replayedAt !== undefined).length;
    expect(incomplete.replayed).toBe(markedInBucket);
    expect(written).toHaveLength(markedInBucket);
    expect(incomplete.unmarked).toBe(40 - markedInBucket);
    expect(incomplete.remaining).toBe(0);
    expect(incomplete.unmarked).toBeGreaterThanOrEqual(1);
    // The same replay again puts back exactly the unmarked ones.
    const again = await replayQuarantine(s3, kinesis, q, after, { streamName: target.name, dryRun: true });
    expect(again).toMatchObject({ toReplay: 40 - markedInBucket, alreadyReplayed: markedInBucket });
  });

  it("filters by reason, time and shard", async () => {
    const s = await stream([{ key: "k", body: "x" }]);
    const q = await bucket();
    await storeFailureRecords(
      [message("m1", failure(s.arn, s.sequences[0] ?? "", s.sequences[0] ?? "", 1))],
      lambdaContext(),
      deps(q, await queue("d"), []),
    );
    expect(await listQuarantine(s3, q, { reason: "RecordAgeExceeded" })).toHaveLength(0);
    expect(
      await listQuarantine(s3, q, { reason: "RetryAttemptsExhausted", shardId: "shardId-000000000000" }),
    ).toHaveLength(1);
    expect(await listQuarantine(s3, q, { since: Date.now() + 60_000 })).toHaveLength(0);
    expect(await listQuarantine(s3, q, { until: Date.now() + 60_000 })).toHaveLength(1);
  });
});

describe("SQS DLQ redrive", () => {
  const count = async (url: string) =>
    Number(
      (
        await sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["ApproximateNumberOfMessages"] }),
        )
      ).Attributes?.ApproximateNumberOfMessages,
    );

  it("moves a standard DLQ back to its source (the mover, where StartMessageMoveTask is missing), attributes kept", async () => {
    const dlq = await queue("jobs-dlq");
    const source = await queue("jobs");
    for (let i = 0; i < 13; i++) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: dlq,
          MessageBody: `job-${i}`,
          MessageAttributes: { "pipeline.reason.code": { DataType: "String", StringValue: "bad-json" } },
        }),
      );
    }
    expect(await moveMessages(sqs, { dlqUrl: dlq, sourceUrl: source, dryRun: true })).toMatchObject({
      mode: "dry-run",
      waiting: 13,
    });
    const summary = await moveMessages(sqs, { dlqUrl: dlq, sourceUrl: source });
    expect(summary).toMatchObject({ mode: "mover", moved: 13, failed: 0 });
    expect(await count(dlq)).toBe(0);
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: source,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ["All"],
      }),
    );
    expect(Messages[0]?.MessageAttributes?.["pipeline.reason.code"]?.StringValue).toBe("bad-json");
  });

  it("moves a FIFO DLQ keeping each message's group and order within the group", async () => {
    const dlq = await queue("session-jobs-dlq", true);
    const source = await queue("session-jobs", true);
    for (let i = 0; i < 6; i++) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: dlq,
          MessageBody: `g${i % 2}-${i}`,
          MessageGroupId: `g${i % 2}`,
          MessageDeduplicationId: `d${i}`,
        }),
      );
    }
    const summary = await moveMessages(sqs, { dlqUrl: dlq, sourceUrl: source, mode: "mover" });
    expect(summary.moved).toBe(6);
    const received: { group: string; body: string }[] = [];
    for (let round = 0; round < 10 && received.length < 6; round++) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: source,
          MaxNumberOfMessages: 10,
          MessageSystemAttributeNames: ["MessageGroupId"],
        }),
      );
      for (const m of Messages) {
        received.push({ group: m.Attributes?.MessageGroupId ?? "", body: m.Body ?? "" });
        await sqs.send(
          new (await import("@aws-sdk/client-sqs")).DeleteMessageCommand({
            QueueUrl: source,
            ReceiptHandle: m.ReceiptHandle,
          }),
        );
      }
    }
    expect(received.filter((r) => r.group === "g0").map((r) => r.body)).toEqual(["g0-0", "g0-2", "g0-4"]);
    expect(received.filter((r) => r.group === "g1").map((r) => r.body)).toEqual(["g1-1", "g1-3", "g1-5"]);
  });

  it("does not lose a FIFO message moved within five minutes of its first send: SQS would drop a reused deduplication id (§3, §4)", async () => {
    const dlq = await queue("session-jobs-dlq", true);
    const source = await queue("session-jobs", true);
    // The job went through the source once (deduplication id d-1), was consumed, then dead-lettered.
    const first = await sqs.send(
      new SendMessageCommand({
        QueueUrl: source,
        MessageBody: "job-1",
        MessageGroupId: "g1",
        MessageDeduplicationId: "d-1",
      }),
    );
    const consumed = await sqs.send(new ReceiveMessageCommand({ QueueUrl: source }));
    await sqs.send(
      new DeleteMessageCommand({ QueueUrl: source, ReceiptHandle: consumed.Messages?.[0]?.ReceiptHandle }),
    );
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: dlq,
        MessageBody: "job-1",
        MessageGroupId: "g1",
        MessageDeduplicationId: "d-1",
      }),
    );
    // The emulator de-duplicates as SQS does: the same id within five minutes is accepted and dropped,
    // answered with the first message's id.
    const probe = await queue("dedupe-probe", true);
    const a = await sqs.send(
      new SendMessageCommand({
        QueueUrl: probe,
        MessageBody: "x",
        MessageGroupId: "g",
        MessageDeduplicationId: "same",
      }),
    );
    const b = await sqs.send(
      new SendMessageCommand({
        QueueUrl: probe,
        MessageBody: "y",
        MessageGroupId: "g",
        MessageDeduplicationId: "same",
      }),
    );
    expect(b.MessageId).toBe(a.MessageId);
    expect(await countMessages(sqs, probe)).toBe(1);

    const summary = await moveMessages(sqs, { dlqUrl: dlq, sourceUrl: source, mode: "mover" });
    expect(summary).toMatchObject({ moved: 1, failed: 0 });
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: source, MessageSystemAttributeNames: ["MessageGroupId"] }),
    );
    expect(Messages.map((m) => [m.Body, m.Attributes?.MessageGroupId])).toEqual([["job-1", "g1"]]);
    expect(Messages[0]?.MessageId).not.toBe(first.MessageId);
    expect(await countMessages(sqs, dlq)).toBe(0);
  });

  it("moves the messages present when it starts, once each, and ends while they are still poison (they come straight back to the DLQ)", async () => {
    const dlq = await queue("tool-jobs-dlq");
    const source = await queue("tool-jobs");
    const sourceArn = (
      await sqs.send(new GetQueueAttributesCommand({ QueueUrl: source, AttributeNames: ["QueueArn"] }))
    ).Attributes?.QueueArn as string;
    for (let i = 0; i < 3; i++)
      await sqs.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: `poison-${i}` }));

    // The worker: every message it receives is poison and goes straight back to the DLQ.
    let moverDone = false;
    let deadLettered = 0;
    const worker = (async () => {
      for (;;) {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: source,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 1,
            MessageAttributeNames: ["All"],
            MessageSystemAttributeNames: ["All"],
          }),
        );
        for (const m of Messages) {
          await sendToDeadLetterQueue(sqs, dlq, toSqsEventRecord(m, sourceArn), {
            code: "bad-json",
            message: "still poison",
          });
          await sqs.send(new DeleteMessageCommand({ QueueUrl: source, ReceiptHandle: m.ReceiptHandle }));
          deadLettered += 1;
        }
        if (moverDone && Messages.length === 0) return;
      }
    })();

    const progress: number[] = [];
    const summary = await moveMessages(sqs, {
      dlqUrl: dlq,
      sourceUrl: source,
      mode: "mover",
      onProgress: (moved) => {
        progress.push(moved);
        // A mover that re-moves what came back never ends: stop it here so the test fails instead.
        if (moved > 30) throw new Error(`moved ${moved} times: the mover re-moves returned messages`);
      },
    }).finally(() => {
      moverDone = true;
    });
    await worker;

    expect(summary).toMatchObject({ mode: "mover", moved: 3, failed: 0 });
    expect(progress.at(-1)).toBe(3);
    expect(deadLettered).toBe(3);
    // Each came back once and is there for the next run (nothing hidden, nothing lost).
    expect(await countMessages(sqs, dlq)).toBe(3);
    expect(await countMessages(sqs, source)).toBe(0);
  });

  it("dry run counts what the DLQ holds when ApproximateNumberOfMessages lags (GetQueueAttributes), and hides nothing", async () => {
    const proxy = await startSqsLaggingCountProxy(sqsS3.endpoint);
    try {
      const lagging = sqsClient(emulatorClientOptions(proxy));
      const dlq = await queue("tool-jobs-dlq");
      const source = await queue("tool-jobs");
      proxy.lag(dlq);
      // SQS's figure before the messages arrive, which the lagging queue keeps answering.
      await lagging.send(new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ["All"] }));
      for (let i = 0; i < 3; i++)
        await sqs.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: `m-${i}` }));
      expect(
        Number(
          (
            await lagging.send(
              new GetQueueAttributesCommand({
                QueueUrl: dlq,
                AttributeNames: ["ApproximateNumberOfMessages"],
              }),
            )
          ).Attributes?.ApproximateNumberOfMessages,
        ),
      ).toBe(0);

      const summary = await moveMessages(lagging, { dlqUrl: dlq, sourceUrl: source, dryRun: true });
      expect(summary).toMatchObject({
        mode: "dry-run",
        waiting: 3,
        waitingIsApproximate: false,
        approximateWaiting: 0,
      });
      // Every message is visible again at once: a receive gets all three.
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: dlq, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      expect(Messages).toHaveLength(3);

      // A FIFO DLQ cannot be counted by receiving (a held message hides the rest of its group, §3):
      // the figure is SQS's and the summary says it is approximate.
      const fifoDlq = await queue("session-jobs-dlq", true);
      proxy.lag(fifoDlq);
      await lagging.send(new GetQueueAttributesCommand({ QueueUrl: fifoDlq, AttributeNames: ["All"] }));
      for (let i = 0; i < 3; i++)
        await sqs.send(
          new SendMessageCommand({
            QueueUrl: fifoDlq,
            MessageBody: `f-${i}`,
            MessageGroupId: "g",
            MessageDeduplicationId: `f-${i}`,
          }),
        );
      const fifo = await moveMessages(lagging, {
        dlqUrl: fifoDlq,
        sourceUrl: await queue("session-jobs", true),
        dryRun: true,
      });
      expect(fifo).toMatchObject({ mode: "dry-run", waiting: 0, waitingIsApproximate: true });
      expect(await count(fifoDlq)).toBe(3);
    } finally {
      await proxy.stop();
    }
  });
});
