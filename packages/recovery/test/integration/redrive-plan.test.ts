import {
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import {
  createQueueWhenReady,
  EmulatorStack,
  emulatorClientOptions,
  type RunningEmulator,
  startSqsS3,
} from "@mcp-pipeline/emulators";
import { startMotoServer } from "@mcp-pipeline/emulators/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CheckStatus,
  countMessages,
  InvalidQueueReferenceError,
  MAX_RECEIVES_REASON,
  moveMessages,
  planRedrive,
  QueueNotFoundError,
  type RedrivePlan,
  resolveQueue,
  watchReturns,
} from "../../src/index.js";

/**
 * Where a redrive may go (issue 26, items 1 and 2), against both AWS API endpoints: fauxqs (the local
 * stack's SQS, which lacks ListDeadLetterSourceQueues: the DLQ's redrive allow policy names its sources)
 * and moto's server (which answers ListDeadLetterSourceQueues and GetQueueUrl by owner as SQS does).
 */
const BACKENDS: readonly { readonly name: string; readonly start: () => Promise<RunningEmulator> }[] = [
  { name: "fauxqs", start: startSqsS3 },
  { name: "moto", start: startMotoServer },
];

interface Pair {
  readonly url: string;
  readonly arn: string;
  readonly dlqUrl: string;
  readonly dlqArn: string;
}

describe.each(BACKENDS)("planRedrive against $name", (backend) => {
  let endpoint: RunningEmulator;
  let sqs: SQSClient;
  let n = 0;
  let jobs: Pair;
  let sessions: Pair;

  /** A source queue and its DLQ, linked as terraform/modules/queue links them (redrive and allow policies). */
  async function pair(fifo: boolean): Promise<Pair> {
    const end = fifo ? ".fifo" : "";
    const type = fifo ? { FifoQueue: "true" } : {};
    n += 1;
    const dlq = await createQueueWhenReady(sqs, { QueueName: `jobs-${n}-dlq${end}`, Attributes: type });
    const source = await createQueueWhenReady(sqs, {
      QueueName: `jobs-${n}${end}`,
      Attributes: {
        ...type,
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 3 }),
      },
    });
    await sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: dlq.url,
        Attributes: {
          RedriveAllowPolicy: JSON.stringify({ redrivePermission: "byQueue", sourceQueueArns: [source.arn] }),
        },
      }),
    );
    return { url: source.url, arn: source.arn, dlqUrl: dlq.url, dlqArn: dlq.arn };
  }

  beforeAll(async () => {
    endpoint = await backend.start();
    sqs = sqsClient({ ...emulatorClientOptions(endpoint), region: "eu-west-1", maxAttempts: 1 });
    jobs = await pair(false);
    sessions = await pair(true);
  }, 180_000);
  afterAll(async () => {
    sqs?.destroy();
    await endpoint?.stop();
  });

  const failedChecks = (plan: RedrivePlan) =>
    plan.checks.filter((c) => c.status === CheckStatus.Failed).map((c) => `${c.name}: ${c.detail}`);

  it("goes back to the DLQ's source by default, as StartMessageMoveTask does", async () => {
    const plan = await planRedrive(sqs, { from: jobs.dlqUrl });
    expect(failedChecks(plan)).toEqual([]);
    expect(plan.to?.arn).toBe(jobs.arn);
  });

  it("accepts queue ARNs and URLs alike", async () => {
    const plan = await planRedrive(sqs, { from: jobs.dlqArn, to: jobs.arn });
    expect(failedChecks(plan)).toEqual([]);
    expect(plan.from.url).toContain(`jobs-`);
    expect(plan.to?.url).toBeDefined();
    expect((await resolveQueue(sqs, sessions.url, "--to")).arn).toBe(sessions.arn);
  });

  it.each([
    [
      "a FIFO DLQ into the standard queue",
      () => ({ from: sessions.dlqUrl, to: jobs.url }),
      /queue type: .*FIFO queue and .* a standard queue/,
    ],
    [
      "a standard DLQ into the FIFO queue",
      () => ({ from: jobs.dlqUrl, to: sessions.url }),
      /queue type: .*standard queue and .* a FIFO queue/,
    ],
    ["a DLQ into itself", () => ({ from: jobs.dlqUrl, to: jobs.dlqUrl }), /target: --to is the DLQ itself/],
  ])("refuses %s, naming why", async (_label, request, reason) => {
    const { from, to } = request();
    const plan = await planRedrive(sqs, { from: from, to });
    expect(failedChecks(plan)).toEqual([expect.stringMatching(reason)]);
    expect(plan.to).toBeUndefined();
  });

  it("refuses a --to that is not a source of that DLQ, naming the DLQ's source", async () => {
    const other = await pair(false);
    const plan = await planRedrive(sqs, { from: jobs.dlqUrl, to: other.url });
    expect(failedChecks(plan)).toEqual([
      `source: ${other.arn} is not a source of ${jobs.dlqArn}: its redrive policy sends failures to ${other.dlqArn}; the DLQ's source is ${jobs.arn}`,
    ]);
  });

  it("refuses a queue that is no queue's DLQ", async () => {
    const plan = await planRedrive(sqs, { from: jobs.url });
    expect(failedChecks(plan)).toEqual([
      `source: no queue's redrive policy names ${jobs.arn}: it is not a DLQ here, and has no source to go back to`,
    ]);
  });

  it("says which flag named a queue that does not exist, and refuses what is neither URL nor ARN", async () => {
    const missingArn = jobs.arn.replace(/jobs-\d+$/, "nope");
    await expect(planRedrive(sqs, { from: jobs.dlqUrl, to: missingArn })).rejects.toBeInstanceOf(
      QueueNotFoundError,
    );
    await expect(planRedrive(sqs, { from: missingArn })).rejects.toMatchObject({
      name: "QueueNotFoundError",
      flag: "--from",
      given: missingArn,
      message: expect.stringContaining(`the queue --from names (${missingArn}) does not exist`),
    });
    const missingUrl = jobs.url.replace(/jobs-\d+$/, "nope");
    await expect(planRedrive(sqs, { from: missingUrl })).rejects.toMatchObject({
      name: "QueueNotFoundError",
      flag: "--from",
    });
    await expect(planRedrive(sqs, { from: "tool-jobs-dlq" })).rejects.toBeInstanceOf(
      InvalidQueueReferenceError,
    );
    await expect(planRedrive(sqs, { from: "arn:aws:s3:::bucket" })).rejects.toMatchObject({
      name: "InvalidQueueReferenceError",
      flag: "--from",
    });
  });

  it("refuses an ARN of another region: the queue of that name here is not it", async () => {
    const elsewhere = jobs.arn.replace(":eu-west-1:", ":us-west-2:");
    await expect(planRedrive(sqs, { from: jobs.dlqUrl, to: elsewhere })).rejects.toMatchObject({
      name: "QueueNotFoundError",
      flag: "--to",
    });
  });
});

describe("moveMessages: --max and --reason, and what comes straight back", () => {
  let stack: EmulatorStack;
  let sqs: SQSClient;
  beforeAll(async () => {
    stack = await EmulatorStack.start({ sqsS3: true });
    sqs = sqsClient(emulatorClientOptions(stack.sqsS3));
  });
  afterAll(() => stack?.stop());

  it("moves at most max, only the reason asked for, and leaves the rest visible", async () => {
    const q = await stack.createQueue({
      name: "max-jobs",
      dlq: { name: "max-jobs-dlq", maxReceiveCount: 3 },
    });
    const dlq = q.dlqUrl ?? "";
    const send = (body: string, reason?: string) =>
      sqs.send(
        new SendMessageCommand({
          QueueUrl: dlq,
          MessageBody: body,
          ...(reason
            ? { MessageAttributes: { "pipeline.reason.code": { DataType: "String", StringValue: reason } } }
            : {}),
        }),
      );
    for (let i = 0; i < 4; i++) await send(`moved-by-sqs-${i}`);
    for (let i = 0; i < 2; i++) await send(`poison-${i}`, "bad-json");
    const one = await moveMessages(sqs, { dlqUrl: dlq, sourceUrl: q.url, max: 1 });
    // It stops reading once it has moved one: what it read besides is left, the rest unread.
    expect(one).toMatchObject({ mode: "mover", moved: 1 });
    expect(await countMessages(sqs, dlq)).toBe(5);
    const retryable = await moveMessages(sqs, {
      dlqUrl: dlq,
      sourceUrl: q.url,
      reason: MAX_RECEIVES_REASON,
    });
    expect(retryable).toMatchObject({ mode: "mover", moved: 3, leftByChoice: 2 });
    expect(retryable.movedDigests).toHaveLength(3);
    expect(await countMessages(sqs, dlq)).toBe(2);
    expect(await countMessages(sqs, q.url)).toBe(4);
    await expect(
      moveMessages(sqs, { dlqUrl: dlq, sourceUrl: q.url, max: 1, mode: "move-task" }),
    ).rejects.toThrow("max and reason need the mover");
  });

  it("watchReturns sees the moved messages dead-lettered again, and ends as soon as all are back", async () => {
    const q = await stack.createQueue({
      name: "back-jobs",
      dlq: { name: "back-jobs-dlq", maxReceiveCount: 3 },
    });
    const dlq = q.dlqUrl ?? "";
    for (let i = 0; i < 2; i++)
      await sqs.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: `still-poison-${i}` }));
    const moved = await moveMessages(sqs, { dlqUrl: dlq, sourceUrl: q.url, mode: "mover" });
    // The worker: each is still poison, and goes back with its reason.
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: q.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    expect(Messages).toHaveLength(2);
    for (const m of Messages) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: dlq,
          MessageBody: m.Body,
          MessageAttributes: { "pipeline.reason.code": { DataType: "String", StringValue: "bad-json" } },
        }),
      );
      await sqs.send(new DeleteMessageCommand({ QueueUrl: q.url, ReceiptHandle: m.ReceiptHandle }));
    }
    const returns = await watchReturns(sqs, dlq, {
      since: moved.startedAt,
      digests: moved.movedDigests,
      // A bound, not a wait: it returns once both are seen.
      timeoutMs: 120_000,
      pollMs: 100,
    });
    expect(returns).toMatchObject({ cameBack: 2, arrived: 2, byReason: { "bad-json": 2 } });
    // Nothing taken: both wait in the DLQ.
    expect(await countMessages(sqs, dlq)).toBe(2);
  });
});

describe.each(BACKENDS)("moveMessages keeps a FIFO group's order against $name", (backend) => {
  let endpoint: RunningEmulator;
  let sqs: SQSClient;
  beforeAll(async () => {
    endpoint = await backend.start();
    sqs = sqsClient({ ...emulatorClientOptions(endpoint), region: "eu-west-1" });
  }, 180_000);
  afterAll(async () => {
    sqs?.destroy();
    await endpoint?.stop();
  });

  // fauxqs hides a group's later messages while one is held; moto, like SQS, returns several of a group
  // in one receive (§3): there the mover itself must hold them back.
  it("a message left by --reason holds the later messages of its group in the DLQ", async () => {
    const fifo = { FifoQueue: "true" };
    const dlqQueue = await createQueueWhenReady(sqs, { QueueName: "order-jobs-dlq.fifo", Attributes: fifo });
    const dlq = dlqQueue.url;
    const source = await createQueueWhenReady(sqs, {
      QueueName: "order-jobs.fifo",
      Attributes: {
        ...fifo,
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqQueue.arn, maxReceiveCount: 3 }),
      },
    });
    const send = (body: string, group: string, reason?: string) =>
      sqs.send(
        new SendMessageCommand({
          QueueUrl: dlq,
          MessageBody: body,
          MessageGroupId: group,
          MessageDeduplicationId: body,
          ...(reason
            ? { MessageAttributes: { "pipeline.reason.code": { DataType: "String", StringValue: reason } } }
            : {}),
        }),
      );
    await send("g-1-poison", "g", "bad-json");
    await send("g-2-retry", "g");
    await send("h-1-retry", "h");
    const moved = await moveMessages(sqs, {
      dlqUrl: dlq,
      sourceUrl: source.url,
      reason: MAX_RECEIVES_REASON,
    });
    // h's job goes back; g's second job stays behind g's first, which --reason left.
    expect(moved).toMatchObject({ mode: "mover", moved: 1 });
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: source.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    expect(Messages.map((m) => m.Body)).toEqual(["h-1-retry"]);
  });
});
