import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageBatchCommand } from "@aws-sdk/client-sqs";
import { createQueueWhenReady } from "@mcp-pipeline/emulators";
import { sqsSuite } from "@mcp-pipeline/emulators/sqs-suite";
import type { JobItem } from "@mcp-pipeline/local-runtime";
import { describe, expect, it } from "vitest";
import { type JobSend, jobMessage } from "../../src/job-messages.js";
import { Ledger } from "../../src/ledger.js";

const suite = sqsSuite();

const poison: JobItem = { kind: "poison", body: "not json", group: "session-1" };
const job = (callId: string): JobItem => ({
  kind: "job",
  body: JSON.stringify({ callId }),
  callId,
  group: "session-1",
  transient: false,
  enqueuedAt: 0,
});

describe("jobMessage", () => {
  it("gives every poison job of a run its own deduplication id, wherever its chunk puts it (§3)", () => {
    // Prepare: the chaos run sends its jobs in chunks; the 4th poison job of one chunk and of the next
    // were both `poison-3-0` when the id came from the position in the chunk.
    const sends: JobSend[] = [3, 13, 23].map((index) => ({ job: poison, index, copy: 0 }));

    // Act
    const ids = sends.map((send) => jobMessage(send, true).MessageDeduplicationId);

    // Assert
    expect(new Set(ids).size).toBe(3);
  });

  it("two poison jobs with the same body and group are two messages in the FIFO queue, not one", async () => {
    // Prepare
    const { sqs } = suite;
    const { url } = await createQueueWhenReady(sqs, {
      QueueName: "poison-jobs.fifo",
      Attributes: { FifoQueue: "true" },
    });
    const sends: JobSend[] = [
      { job: poison, index: 3, copy: 0 },
      { job: job("call-1"), index: 4, copy: 0 },
      { job: job("call-1"), index: 4, copy: 1 },
      { job: poison, index: 13, copy: 0 },
    ];

    // Act
    const { Successful = [] } = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: sends.map((send, n) => ({ Id: String(n), ...jobMessage(send, true) })),
      }),
    );

    // Assert: four messages with four ids, received and deleted until none is left, in send order (§3).
    expect(new Set(Successful.map((s) => s.MessageId)).size).toBe(4);
    const bodies: string[] = [];
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }),
      );
      if (Messages.length === 0) break;
      for (const m of Messages) {
        bodies.push(m.Body ?? "");
        await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
      }
    }
    expect(bodies).toEqual(["not json", '{"callId":"call-1"}', '{"callId":"call-1"}', "not json"]);
  });

  it("a standard queue's message has no FIFO attributes", () => {
    expect(jobMessage({ job: poison, index: 0, copy: 0 }, false)).toEqual({ MessageBody: "not json" });
  });
});

describe("Ledger.recordJob", () => {
  it("refuses a message id answered for a second job: SQS deduplicated that send and it does not exist", () => {
    // Prepare
    const ledger = new Ledger();
    ledger.recordJob(true, "session-1", undefined, "not json", "m-1");

    // Act
    const second = () => ledger.recordJob(true, "session-1", undefined, "not json", "m-1");

    // Assert: a loud error at the send, not a poison job the run waits for until it times out.
    expect(second).toThrow(/m-1 was answered for two jobs .*deduplicated/);
  });

  it("takes a producer's second send of the same job as one more message of that job", () => {
    const ledger = new Ledger();
    ledger.recordJob(true, "session-1", { callId: "call-1", rejected: false }, "{}", "m-1");
    ledger.recordJob(true, "session-1", { callId: "call-1", rejected: false }, "{}", "m-2");
    expect(ledger.counts().jobs).toBe(1);
    expect(ledger.counts().jobMessages).toBe(2);
  });
});
