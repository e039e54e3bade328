import { SendMessageBatchCommand, SQSClient } from "@aws-sdk/client-sqs";
import {
  createQueueWhenReady,
  emulatorClientOptions,
  type RunningEmulator,
  startSqsS3,
} from "@mcp-pipeline/emulators";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { drainQueue, peekQueue } from "../src/drain-queue.js";

let sqsS3: RunningEmulator;
let sqs: SQSClient;

beforeAll(async () => {
  sqsS3 = await startSqsS3();
  sqs = new SQSClient(emulatorClientOptions(sqsS3));
});
afterAll(async () => {
  sqs?.destroy();
  await sqsS3?.stop();
});

async function fifoQueueWith(name: string, groups: readonly string[]): Promise<string> {
  const { url } = await createQueueWhenReady(sqs, {
    QueueName: `${name}.fifo`,
    Attributes: { FifoQueue: "true" },
  });
  await sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: url,
      Entries: groups.map((group, n) => ({
        Id: String(n),
        MessageBody: `poison ${n}`,
        MessageGroupId: group,
        MessageDeduplicationId: `d-${n}`,
        MessageAttributes: { reason: { DataType: "String", StringValue: `reason ${n}` } },
      })),
    }),
  );
  return url;
}

describe("drainQueue", () => {
  it("reads every message of a FIFO DLQ, a group's later ones included, which a peek cannot (§3)", async () => {
    // Prepare: two poison jobs of one session and one of another, as the FIFO DLQ holds them.
    const peeked = await fifoQueueWith("peek", ["s1", "s1", "s2"]);
    const drained = await fifoQueueWith("drain", ["s1", "s1", "s2"]);

    // Act: a peek (receive, no delete) as run-scenario.ts used to read the DLQ, then a drain.
    const seen = new Set((await peekQueue(sqs, peeked)).map((m) => m.body));
    const messages = await drainQueue(sqs, drained);

    // Assess: the peek never sees the second message of s1 (the first is in flight); the drain sees all,
    // with the attributes and group a replay needs, and leaves the queue empty.
    expect([...seen].sort()).toEqual(["poison 0", "poison 2"]);
    expect(messages.map((m) => [m.body, m.group, m.attributes.reason]).sort()).toEqual([
      ["poison 0", "s1", "reason 0"],
      ["poison 1", "s1", "reason 1"],
      ["poison 2", "s2", "reason 2"],
    ]);
    expect(await drainQueue(sqs, drained)).toEqual([]);
  });

  it("returns nothing from an empty queue without waiting for a long poll", async () => {
    const { url } = await createQueueWhenReady(sqs, {
      QueueName: "empty",
      Attributes: { ReceiveMessageWaitTimeSeconds: "20" },
    });
    expect(await drainQueue(sqs, url)).toEqual([]);
  });
});
