import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { emulatorClientOptions, type RunningEmulator } from "@mcp-pipeline/emulators";
import { startMotoServer } from "@mcp-pipeline/emulators/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SqsEsmParameters, SqsEventSource } from "../../src/index.js";
import { eventually, type Payload, RecordingFunction, stoppedAfterEach } from "../harness.js";

/**
 * The SQS ESM on FIFO queues against moto's server, which answers the way SQS does where fauxqs does
 * not: one ReceiveMessage returns several messages of one message group, and the group's later messages
 * are held back while earlier ones are in flight (docs/aws-semantics.md §3). fauxqs returns one message per
 * group per receive, which hides batches that hold several messages of a group.
 */
let moto: RunningEmulator;
let sqs: SQSClient;
const running = stoppedAfterEach();
let queues = 0;

// moto imports all of its services before it answers: allow for a loaded machine.
beforeAll(async () => {
  moto = await startMotoServer();
  sqs = sqsClient(emulatorClientOptions(moto));
}, 300_000);
afterAll(() => moto?.stop());

const defaults: SqsEsmParameters = {
  batchSize: 10,
  batchingWindowMs: 0,
  maximumConcurrency: 2,
  reportBatchItemFailures: true,
};

async function fifoQueue(visibilitySeconds = 30): Promise<string> {
  queues += 1;
  const { QueueUrl = "" } = await sqs.send(
    new CreateQueueCommand({
      QueueName: `fifo-${queues}.fifo`,
      Attributes: { FifoQueue: "true", VisibilityTimeout: String(visibilitySeconds) },
    }),
  );
  return QueueUrl;
}

async function send(queueUrl: string, items: readonly (Payload & { group: string })[]): Promise<void> {
  for (const [i, { group, ...payload }] of items.entries()) {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: JSON.stringify(payload),
        MessageGroupId: group,
        MessageDeduplicationId: `${payload.id}-${i}`,
      }),
    );
  }
}

async function setup(items: (Payload & { group: string })[], parameters: Partial<SqsEsmParameters> = {}) {
  const queueUrl = await fifoQueue();
  await send(queueUrl, items);
  const fn = new RecordingFunction({ timeoutMs: 20_000 });
  const esm = new SqsEventSource({
    sqs,
    queueUrl,
    function: fn,
    parameters: { ...defaults, ...parameters },
    waitTimeSeconds: 1,
  });
  running.push(esm, fn);
  return { queueUrl, fn, esm };
}

describe("§3 FIFO, against a queue that answers as SQS does (moto)", () => {
  it("§3 the queue returns several messages of one group in one receive, and holds the group while they are in flight", async () => {
    const queueUrl = await fifoQueue();
    await send(queueUrl, [
      ...Array.from({ length: 4 }, (_, i) => ({ id: `a${i}`, group: "a" })),
      { id: "b0", group: "b" },
    ]);
    const first = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }));
    expect(first.Messages?.map((m) => JSON.parse(m.Body ?? "{}").id)).toEqual(["a0", "a1", "a2", "a3", "b0"]);
    await send(queueUrl, [
      { id: "a4", group: "a" },
      { id: "c0", group: "c" },
    ]);
    const second = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }));
    expect(second.Messages?.map((m) => JSON.parse(m.Body ?? "{}").id)).toEqual(["c0"]);
  });

  it("§3 several messages of one group come in one batch, in order, and groups share a batch", async () => {
    const items = Array.from({ length: 9 }, (_, i) => ({ id: `g${i % 3}-${i}`, group: `g${i % 3}` }));
    const { fn, esm } = await setup(items);
    await esm.start();
    await eventually(() => expect(fn.seen).toHaveLength(9));
    expect(fn.invocations.map((i) => i.ids)).toEqual([items.map((i) => i.id)]);
  });

  it("§3 order within each message group is kept, groups run concurrently", async () => {
    const items = Array.from({ length: 18 }, (_, i) => ({
      id: `g${i % 3}-${i}`,
      group: `g${i % 3}`,
      sleepMs: 20,
    }));
    const { fn, esm } = await setup(items, { maximumConcurrency: 3, batchSize: 4 });
    await esm.start();
    await eventually(() => expect(fn.seen).toHaveLength(18));
    for (let g = 0; g < 3; g++) {
      const order = fn.seen.filter((id) => id.startsWith(`g${g}-`)).map((id) => Number(id.split("-")[1]));
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
  });

  it("§3 the batching window does not apply to FIFO queues", async () => {
    const { fn, esm } = await setup([{ id: "f1", group: "a" }], { batchingWindowMs: 60_000 });
    await esm.start();
    await eventually(() => expect(fn.seen).toEqual(["f1"]));
  });
});
