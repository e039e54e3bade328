import {
  CreateStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type KinesisClient,
  PutRecordCommand,
} from "@aws-sdk/client-kinesis";
import { CreateBucketCommand, type S3Client } from "@aws-sdk/client-s3";
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { DeadLetterAttribute, sendToDeadLetterQueue, sqsClient } from "@mcp-pipeline/aws";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { readQuarantineRecord, writeQuarantineRecord } from "@mcp-pipeline/quarantine";
import { lambdaContext, sqsRecord } from "@mcp-pipeline/testing";
import {
  emulatorClientOptions,
  type RunningEmulator,
  startKinesis,
  startKinesisFaultProxy,
  startSqsS3,
} from "@mcp-pipeline/testing/emulators";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  countQuarantine,
  type FailureStoreDeps,
  type KinesisFailureRecord,
  type LostRange,
  listQuarantine,
  moveMessages,
  replayedAt,
  replayQuarantine,
  rereadRange,
  storeFailureRecords,
} from "../src/index.js";

let kinesisEmulator: RunningEmulator;
let sqsS3: RunningEmulator;
let kinesis: KinesisClient;
let s3: S3Client;
let sqs: SQSClient;
let n = 0;

beforeAll(async () => {
  [kinesisEmulator, sqsS3] = await Promise.all([startKinesis(), startSqsS3()]);
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
  await kinesis.send(new CreateStreamCommand({ StreamName: name, ShardCount: 1 }));
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
  await s3.send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

async function queue(name: string, fifo = false): Promise<string> {
  const { QueueUrl = "" } = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${name}-${++n}${fifo ? ".fifo" : ""}`,
      Attributes: fifo ? { FifoQueue: "true" } : {},
    }),
  );
  return QueueUrl;
}

function failure(arn: string, start: string, end: string, batchSize: number): KinesisFailureRecord {
  return {
    requestContext: {
      requestId: "c9b8fa9f-5a7f-4b2a-af9c-0c604cde93a5",
      functionArn: "arn:aws:lambda:us-east-1:000000000000:function:processor",
      condition: "RetryAttemptsExhausted",
      approximateInvokeCount: 4,
    },
    responseContext: { statusCode: 200, executedVersion: "$LATEST", functionError: "Unhandled" },
    version: "1.0",
    timestamp: "2026-11-30T10:00:00.000Z",
    KinesisBatchInfo: {
      shardId: "shardId-000000000000",
      startSequenceNumber: start,
      endSequenceNumber: end,
      approximateArrivalOfFirstRecord: "2026-11-30T09:59:00.000Z",
      approximateArrivalOfLastRecord: "2026-11-30T09:59:01.000Z",
      batchSize,
      streamArn: arn,
    },
  };
}

function deps(quarantineBucket: string, dlqUrl: string, lost: LostRange[]): FailureStoreDeps {
  return {
    reread: (range) => rereadRange(kinesis, range),
    quarantine: (record) => writeQuarantineRecord(s3, quarantineBucket, record, { ifAbsent: true }),
    deadLetter: (record, reason) => sendToDeadLetterQueue(sqs, dlqUrl, record, reason),
    onLost: (l) => lost.push(l),
    functionName: "dlq-redrive",
    concurrency: 4,
    deadlineMarginMs: 1_000,
  };
}

const message = (id: string, body: unknown) =>
  sqsRecord({ messageId: id, body: typeof body === "string" ? body : JSON.stringify(body) });

describe("rereadRange (esm-semantics.md §1.6: the failure record holds only the range)", () => {
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
      dryRun: true,
    });

    const first = await replayQuarantine(s3, kinesis, q, await listQuarantine(s3, q), {
      streamName: target.name,
      ratePerSecond: 50,
    });
    expect(first).toMatchObject({ matched: 3, replayed: 3, alreadyReplayed: 0 });
    expect(await replayedAt(s3, q, onlyA[0]?.key ?? "")).toMatch(/Z$/);
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
});
