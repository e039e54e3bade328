import {
  GetRecordsCommand,
  GetShardIteratorCommand,
  type KinesisClient,
  PutRecordCommand,
} from "@aws-sdk/client-kinesis";
import { ReceiveMessageCommand, SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import {
  createBucketWhenReady,
  createQueueWhenReady,
  EmulatorStack,
  emulatorClientOptions,
} from "@mcp-pipeline/emulators";
import {
  captureOutput,
  kinesisFailureRecord,
  lambdaContext,
  sqsRecord,
} from "@mcp-pipeline/emulators/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { manualActionSchema } from "../../src/config.js";
import { handler } from "../../src/index.js";
import { dlqRedriveEnvironment } from "../environment.js";

afterEach(() => vi.unstubAllEnvs());

describe("dlq-redrive handler: bad events and configuration", () => {
  it.each([
    ["no event", undefined],
    ["an unknown action", { action: "delete-everything" }],
    ["a replay with a bad time", { action: "replay", filter: { since: "yesterday" } }],
    ["a redrive without queue URLs", { action: "redrive-dlq" }],
  ])("refuses %s with InvalidEventError", async (_label, event) => {
    await expect(handler(event, lambdaContext({ functionName: "dlq-redrive" }))).rejects.toMatchObject({
      name: "InvalidEventError",
    });
  });

  it("manual actions are dry runs unless asked otherwise", () => {
    expect(manualActionSchema.parse({ action: "replay" })).toMatchObject({
      dryRun: true,
      ratePerSecond: 100,
    });
  });

  it("fails loudly, naming every missing setting, on an SQS batch without configuration", async () => {
    vi.stubEnv("QUARANTINE_BUCKET", undefined);
    vi.stubEnv("STREAM_NAME", undefined);
    vi.stubEnv("DEAD_LETTER_QUEUE_URL", "not-a-queue");
    const run = handler({ Records: [] }, lambdaContext({ functionName: "dlq-redrive" }));
    await expect(run).rejects.toMatchObject({ name: "ConfigError" });
    for (const name of ["QUARANTINE_BUCKET", "STREAM_NAME", "DEAD_LETTER_QUEUE_URL"])
      await expect(run).rejects.toThrow(name);
  });

  it.each(["0", "129", "many"])(
    "refuses QUARANTINE_PUT_CONCURRENCY=%s with a ConfigError naming it",
    async (value) => {
      vi.stubEnv("QUARANTINE_BUCKET", "quarantine");
      vi.stubEnv("STREAM_NAME", "events");
      vi.stubEnv("DEAD_LETTER_QUEUE_URL", "https://sqs.eu-west-1.amazonaws.com/123456789012/failures-dlq");
      vi.stubEnv("QUARANTINE_PUT_CONCURRENCY", value);
      const run = handler({ Records: [] }, lambdaContext({ functionName: "dlq-redrive" }));
      await expect(run).rejects.toMatchObject({ name: "ConfigError" });
      await expect(run).rejects.toThrow("QUARANTINE_PUT_CONCURRENCY");
    },
  );
});

describe("dlq-redrive handler: the consumer shell over packages/recovery, against the emulators", () => {
  let stack: EmulatorStack;
  let sqs: SQSClient;
  let kinesis: KinesisClient;
  let dlqUrl: string;
  const bucket = "quarantine-handler-test";

  beforeAll(async () => {
    stack = await EmulatorStack.start({ sqsS3: true, kinesis: true });
    sqs = sqsClient(emulatorClientOptions(stack.sqsS3));
    kinesis = kinesisClient(emulatorClientOptions(stack.kinesis));
    ({ url: dlqUrl } = await createQueueWhenReady(sqs, { QueueName: "failures-dlq" }));
    await createBucketWhenReady(s3Client(emulatorClientOptions(stack.sqsS3)), { Bucket: bucket });
    await stack.createStream("events");
  });
  afterAll(async () => {
    sqs?.destroy();
    kinesis?.destroy();
    await stack?.stop();
  });

  /** The handler as a new sandbox loads it, with this stack's environment. */
  async function freshHandler() {
    vi.resetModules();
    const env = {
      ...dlqRedriveEnvironment(stack.sqsS3.endpoint, bucket, dlqUrl),
      AWS_ENDPOINT_URL_KINESIS: stack.kinesis.endpoint,
    };
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    return (await import("../../src/index.js")).handler;
  }

  it("keeps a message that is not an on-failure record in the failure queue's DLQ and emits EMF metrics", async () => {
    const handler = await freshHandler();
    const stray = sqsRecord({ messageId: "stray-1", body: "not a failure record" });
    const { result, lines } = await captureOutput(() =>
      handler({ Records: [stray] }, lambdaContext({ functionName: "dlq-redrive" })),
    );
    expect(result).toEqual({ batchItemFailures: [] });
    expect(lines.find((l) => l._aws !== undefined)).toMatchObject({
      FailureRecords: 1,
      DeadLettered: 1,
      RecordsQuarantined: 0,
      service: "dlq-redrive",
    });
    expect(lines.some((l) => l.message === "not an on-failure record: kept in the failure queue's DLQ")).toBe(
      true,
    );
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    expect(Messages.map((m) => m.Body)).toEqual(["not a failure record"]);
  });

  it("keeps malformed records (null, no attributes, no body) in the failure queue's DLQ one by one, never failing the batch with a TypeError (issue 24)", async () => {
    const handler = await freshHandler();
    const stray = sqsRecord({ messageId: "stray-2", body: "not a failure record" });
    const { attributes: _none, ...noAttributes } = sqsRecord({ messageId: "no-attributes", body: "x" });
    const { body: _empty, ...noBody } = sqsRecord({ messageId: "no-body", body: "" });
    const { result, lines } = await captureOutput(() =>
      handler(
        { Records: [stray, null, noAttributes, noBody] },
        lambdaContext({ functionName: "dlq-redrive" }),
      ),
    );
    expect(result).toEqual({ batchItemFailures: [] });
    expect(lines.find((l) => l._aws !== undefined)).toMatchObject({ FailureRecords: 4, DeadLettered: 4 });
    const dead: { body: string; reason: string; source: string }[] = [];
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: dlqUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageAttributeNames: ["All"],
        }),
      );
      if (Messages.length === 0) break;
      for (const m of Messages)
        dead.push({
          body: m.Body ?? "",
          reason: m.MessageAttributes?.["pipeline.reason.code"]?.StringValue ?? "",
          source: m.MessageAttributes?.["pipeline.source.messageId"]?.StringValue ?? "",
        });
    }
    expect(dead.sort((a, b) => a.source.localeCompare(b.source))).toEqual([
      {
        body: expect.stringMatching(/^malformed SQS record, no body to send; as received: null$/),
        reason: "malformed-record",
        source: "-",
      },
      { body: "x", reason: "bad-json", source: "no-attributes" },
      {
        body: expect.stringMatching(
          /^malformed SQS record, no body to send; as received: \{"messageId":"no-body"/,
        ),
        reason: "bad-json",
        source: "no-body",
      },
      { body: "not a failure record", reason: "bad-json", source: "stray-2" },
    ]);
  });

  it("runs a manual replay (a dry run unless asked otherwise) and logs what it did", async () => {
    const handler = await freshHandler();
    const { result, lines } = await captureOutput(() =>
      handler({ action: "replay" }, lambdaContext({ functionName: "dlq-redrive" })),
    );
    expect(result).toMatchObject({
      matched: 0,
      alreadyReplayed: 0,
      replayed: 0,
      dryRun: true,
      unreadable: [],
    });
    expect(lines.find((l) => l.message === "manual action done")).toMatchObject({
      action: "replay",
      result: { dryRun: true },
    });
  });

  it("replays a valid record given up again after its first replay (issue 24, defect 2: the same code as the CLI)", async () => {
    const handler = await freshHandler();
    const context = lambdaContext({ functionName: "dlq-redrive" });
    const s3 = s3Client(emulatorClientOptions(stack.sqsS3));
    /** What the event source does when it gives up on a record of `events`: a failure record for it. */
    const giveUp = async (sequence: string, shardId: string, messageId: string) => {
      const failure = kinesisFailureRecord({
        streamArn: "arn:aws:kinesis:us-east-1:000000000000:stream/events",
        shardId,
        start: sequence,
      });
      expect(
        await handler({ Records: [sqsRecord({ messageId, body: JSON.stringify(failure) })] }, context),
      ).toEqual({ batchItemFailures: [] });
    };
    const put = await kinesis.send(
      new PutRecordCommand({
        StreamName: "events",
        PartitionKey: "session-again",
        Data: new TextEncoder().encode('{"valid":1}'),
      }),
    );
    await giveUp(put.SequenceNumber ?? "", put.ShardId ?? "", "failure-1");
    const replay = { action: "replay", filter: { session: "session-again" }, dryRun: false };
    expect(await handler(replay, context)).toMatchObject({ replayed: 1 });
    // The replayed record is given up on again (a new position), then the cause is fixed.
    const { ShardIterator } = await kinesis.send(
      new GetShardIteratorCommand({
        StreamName: "events",
        ShardId: put.ShardId,
        ShardIteratorType: "AFTER_SEQUENCE_NUMBER",
        StartingSequenceNumber: put.SequenceNumber,
      }),
    );
    const [again] = (await kinesis.send(new GetRecordsCommand({ ShardIterator }))).Records ?? [];
    expect(again?.PartitionKey).toBe("session-again");
    await giveUp(again?.SequenceNumber ?? "", put.ShardId ?? "", "failure-2");
    expect(await handler({ ...replay, dryRun: true }, context)).toMatchObject({
      matched: 1,
      toReplay: 1,
      givenUpAgain: 1,
      checks: [
        { name: "stream", status: "passed" },
        { name: "records' stream", status: "passed" },
      ],
    });
    expect(await handler(replay, context)).toMatchObject({ replayed: 1, alreadyReplayed: 0 });
    expect(await handler(replay, context)).toMatchObject({ replayed: 0, alreadyReplayed: 1 });
    s3.destroy();
  });

  it("refuses a redrive into a queue that is not the DLQ's source, before moving anything", async () => {
    const handler = await freshHandler();
    const jobs = await stack.createQueue({ name: "h-jobs", dlq: { name: "h-jobs-dlq", maxReceiveCount: 3 } });
    const other = await stack.createQueue({ name: "h-other" });
    await sqs.send(new SendMessageCommand({ QueueUrl: jobs.dlqUrl, MessageBody: "a job" }));
    const action = { action: "redrive-dlq", dlqUrl: jobs.dlqUrl, sourceUrl: other.url, dryRun: false };
    await expect(handler(action, lambdaContext({ functionName: "dlq-redrive" }))).rejects.toMatchObject({
      name: "RecoveryRefusedError",
      message: expect.stringContaining(`source: ${other.arn} is not a source of ${jobs.dlqArn}`),
    });
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: jobs.dlqUrl, WaitTimeSeconds: 1, VisibilityTimeout: 0 }),
    );
    expect(Messages.map((m) => m.Body)).toEqual(["a job"]);
    expect(
      await handler({ ...action, sourceUrl: jobs.url }, lambdaContext({ functionName: "dlq-redrive" })),
    ).toMatchObject({ moved: 1, checks: [{ name: "source", status: "passed" }] });
  });
});
