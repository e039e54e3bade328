import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { createQueueWhenReady } from "@mcp-pipeline/emulators";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RestartableSqs, startRestartableSqs } from "../../src/sqs-restart.js";

let endpoint: RestartableSqs;
let sqs: SQSClient;

beforeAll(async () => {
  endpoint = await startRestartableSqs();
  sqs = sqsClient({
    endpoint: endpoint.endpoint,
    region: "eu-west-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
});
afterAll(async () => {
  sqs.destroy();
  await endpoint.stop();
});

/** A visibility far longer than any wait here: a message that shows again did not wait for it to end. */
const HIDDEN_SECONDS = "600";

async function receiveOne(queueUrl: string): Promise<Message> {
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 1,
      // A long poll answers as soon as a message is visible; empty after 20 s means none was.
      WaitTimeSeconds: 20,
      MessageSystemAttributeNames: ["ApproximateReceiveCount"],
    }),
  );
  expect(Messages).toHaveLength(1);
  return Messages[0] as Message;
}

/** What the workers' retry backoff sends (packages/worker/src/sqs-visibility.ts): the batch form. */
async function showAgainNow(queueUrl: string, message: Message): Promise<void> {
  const { Successful = [], Failed = [] } = await sqs.send(
    new ChangeMessageVisibilityBatchCommand({
      QueueUrl: queueUrl,
      Entries: [{ Id: "0", ReceiptHandle: message.ReceiptHandle, VisibilityTimeout: 0 }],
    }),
  );
  expect(Failed).toEqual([]);
  expect(Successful).toHaveLength(1);
}

/** A standard queue whose one message has been received once: in flight, hidden for HIDDEN_SECONDS. */
async function receivedOnce(queueName: string): Promise<{ url: string; first: Message }> {
  const queue = await createQueueWhenReady(sqs, {
    QueueName: queueName,
    Attributes: { VisibilityTimeout: HIDDEN_SECONDS },
  });
  await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: "job" }));
  return { url: queue.url, first: await receiveOne(queue.url) };
}

describe("the chaos run's restartable SQS (fauxqs persisting to SQLite)", () => {
  it("shows a message whose visibility is set to 0 again at once, its receive count one higher (§2.6)", async () => {
    // Prepare
    const { url, first } = await receivedOnce("visibility-zero");

    // Act
    await showAgainNow(url, first);
    const again = await receiveOne(url);

    // Assess
    expect(again.MessageId).toBe(first.MessageId);
    expect(again.Attributes?.ApproximateReceiveCount).toBe("2");
  });

  it("lets a FIFO group go on in order once its in-flight message is made visible (§2.6, §3)", async () => {
    // Prepare
    const queue = await createQueueWhenReady(sqs, {
      QueueName: "visibility-zero.fifo",
      Attributes: { FifoQueue: "true", VisibilityTimeout: HIDDEN_SECONDS },
    });
    for (const body of ["first", "second"])
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: queue.url,
          MessageBody: body,
          MessageGroupId: "session-1",
          MessageDeduplicationId: body,
        }),
      );
    const first = await receiveOne(queue.url);

    // Act
    await showAgainNow(queue.url, first);
    const again = await receiveOne(queue.url);
    await sqs.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: again.ReceiptHandle }));
    const next = await receiveOne(queue.url);

    // Assess
    expect([first.Body, again.Body, next.Body]).toEqual(["first", "first", "second"]);
    expect(again.Attributes?.ApproximateReceiveCount).toBe("2");
  });

  it("keeps a visible message and its receive count across a restart (§2.3: maxReceiveCount still bounds it)", async () => {
    // Prepare
    const { url, first } = await receivedOnce("visibility-zero-restart");
    await showAgainNow(url, first);

    // Act
    await endpoint.restart(0);
    const again = await receiveOne(url);

    // Assess
    expect(again.MessageId).toBe(first.MessageId);
    expect(again.Attributes?.ApproximateReceiveCount).toBe("2");
  });

  it("hands over several messages of a FIFO group in one receive, in order, and keeps a group's order when two come back (§3)", async () => {
    // Prepare: two groups, three messages each, interleaved.
    const queue = await createQueueWhenReady(sqs, {
      QueueName: "batches.fifo",
      Attributes: { FifoQueue: "true", VisibilityTimeout: HIDDEN_SECONDS },
    });
    for (const n of [1, 2, 3])
      for (const group of ["a", "b"])
        await sqs.send(
          new SendMessageCommand({
            QueueUrl: queue.url,
            MessageBody: `${group}${n}`,
            MessageGroupId: group,
            MessageDeduplicationId: `${group}${n}`,
          }),
        );
    const receive = async () =>
      (
        await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: queue.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
        )
      ).Messages ?? [];

    // Act: one receive takes everything; the first two of group a come back (fauxqs puts each back at its
    // group's front, which alone would reverse them).
    const first = await receive();
    const a = first.filter((m) => m.Body?.startsWith("a"));
    const whileHeld = await receive();
    for (const message of [a[0], a[1]] as Message[]) await showAgainNow(queue.url, message);
    const again = await receive();

    // Assess: a group's messages come in order, several at a time; a group with one in flight gives none.
    expect(first.map((m) => m.Body).sort()).toEqual(["a1", "a2", "a3", "b1", "b2", "b3"]);
    expect(a.map((m) => m.Body)).toEqual(["a1", "a2", "a3"]);
    expect(whileHeld).toEqual([]);
    // a3 is still in flight, so group a stays locked; once it is deleted, a1 and a2 come back in order.
    expect(again).toEqual([]);
    await sqs.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: a[2]?.ReceiptHandle }));
    expect((await receive()).map((m) => m.Body)).toEqual(["a1", "a2"]);
  });

  it("keeps a FIFO group's order when its messages' visibility ends together, as after a failed invocation (§2.3, §3)", async () => {
    // Prepare: one group of three, all received by one receive, as a worker's batch.
    const queue = await createQueueWhenReady(sqs, {
      QueueName: "expired-together.fifo",
      Attributes: { FifoQueue: "true", VisibilityTimeout: "1" },
    });
    for (const n of [1, 2, 3])
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: queue.url,
          MessageBody: `g${n}`,
          MessageGroupId: "g",
          MessageDeduplicationId: `g${n}`,
        }),
      );
    // Short polls: no long poll is waiting, so the receive itself finds the visibilities ended (a long
    // poll's own timer would put them back between two receives).
    const receive = async () =>
      (
        await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: queue.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
        )
      ).Messages ?? [];
    const first = await receive();

    // Act: the invocation failed as a whole (nothing deleted, no visibility changed); receive until the
    // visibility timeout has ended and the group comes back.
    let again: Message[] = [];
    while (again.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      again = await receive();
    }

    // Assess: the group comes back in the order it was sent, not reversed.
    expect(first.map((m) => m.Body)).toEqual(["g1", "g2", "g3"]);
    expect(again.map((m) => m.Body)).toEqual(["g1", "g2", "g3"]);
  });
});
