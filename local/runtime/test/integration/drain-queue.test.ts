import { GetQueueAttributesCommand, SendMessageBatchCommand, SQSClient } from "@aws-sdk/client-sqs";
import { createQueueWhenReady, emulatorClientOptions } from "@mcp-pipeline/emulators";
import { sqsSuite } from "@mcp-pipeline/emulators/sqs-suite";
import { describe, expect, it } from "vitest";
import { type DrainedMessage, drainQueue, peekQueue } from "../../src/pipeline/drain-queue.js";

const suite = sqsSuite();

async function fifoQueueWith(name: string, groups: readonly string[]): Promise<string> {
  const { url } = await createQueueWhenReady(suite.sqs, {
    QueueName: `${name}.fifo`,
    Attributes: { FifoQueue: "true" },
  });
  await suite.sqs.send(
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
    const seen = new Set((await peekQueue(suite.sqs, peeked)).map((m) => m.body));
    const messages = await drainedAll(drained);

    // Assess: the peek never sees the second message of s1 (the first is in flight); the drain sees all,
    // with the attributes and group a replay needs, and leaves the queue empty.
    expect([...seen].sort()).toEqual(["poison 0", "poison 2"]);
    expect(messages.map((m) => [m.body, m.group, m.attributes.reason]).sort()).toEqual([
      ["poison 0", "s1", "reason 0"],
      ["poison 1", "s1", "reason 1"],
      ["poison 2", "s2", "reason 2"],
    ]);
    expect(await drainedAll(drained)).toEqual([]);
  });

  it("returns nothing from an empty queue without waiting for a long poll", async () => {
    const { url } = await createQueueWhenReady(suite.sqs, {
      QueueName: "empty",
      Attributes: { ReceiveMessageWaitTimeSeconds: "20" },
    });
    expect(await drainedAll(url)).toEqual([]);
  });

  it("a receive that fails after a page was deleted: the page is already kept, the rest stays in the queue", async () => {
    // Prepare: fauxqs answers one message per group per receive (SQS may answer a group's messages
    // together, docs/aws-semantics.md §3 emulator note), so here s1's second message needs a second
    // receive; that receive fails, as it does while the chaos run restarts the SQS emulator. The split
    // into pages is the emulator's; what the test holds is that a deleted page is already kept.
    const url = await fifoQueueWith("fails", ["s1", "s1", "s2"]);
    const failing = new SQSClient({ ...emulatorClientOptions(suite.emulator), maxAttempts: 1 });
    let receives = 0;
    failing.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === "ReceiveMessageCommand" && ++receives === 2)
          throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1"), { name: "ECONNREFUSED" });
        return next(args);
      },
      { step: "initialize", name: "refuseSecondReceive" },
    );
    const kept: DrainedMessage[] = [];

    // Act
    const outcome = await drainQueue(failing, url, (page) => kept.push(...page)).catch((e: unknown) => e);
    failing.destroy();

    // Assert: the drain says it failed; what it deleted is in the caller's hands, what it did not is
    // still in the queue: nothing lost.
    expect(outcome).toMatchObject({ name: "ECONNREFUSED" });
    expect(kept.map((m) => m.body).sort()).toEqual(["poison 0", "poison 2"]);
    expect((await drainedAll(url)).map((m) => m.body)).toEqual(["poison 1"]);
  });

  it("a keep that throws leaves its page in the queue", async () => {
    // Prepare
    const { url } = await createQueueWhenReady(suite.sqs, { QueueName: "keep-throws" });
    await suite.sqs.send(
      new SendMessageBatchCommand({ QueueUrl: url, Entries: [{ Id: "0", MessageBody: "kept later" }] }),
    );

    // Act
    const outcome = await drainQueue(suite.sqs, url, () => {
      throw new Error("ledger full");
    }).catch((e: unknown) => e);

    // Assert: not deleted, only hidden for the drain's visibility timeout (60 s).
    expect(outcome).toMatchObject({ message: "ledger full" });
    const { Attributes } = await suite.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ["ApproximateNumberOfMessagesNotVisible"],
      }),
    );
    expect(Attributes?.ApproximateNumberOfMessagesNotVisible).toBe("1");
  });
});

/** Drains `url` into a list. */
async function drainedAll(url: string): Promise<DrainedMessage[]> {
  const out: DrainedMessage[] = [];
  await drainQueue(suite.sqs, url, (page) => out.push(...page));
  return out;
}
