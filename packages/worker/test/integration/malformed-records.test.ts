import { DeadLetterAttribute } from "@mcp-pipeline/aws";
import { lambdaContext, nestedObjects } from "@mcp-pipeline/emulators/testing";
import type { SQSRecord } from "aws-lambda";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { processToolCallJobs, QueueMode } from "../../src/index.js";
import { body, job, type Queue, WorkerStack } from "../stack.js";

/**
 * A record inside `Records` that lacks a field the workers read, or holds the wrong type in one
 * (docs/aws-semantics.md §2.4), between two good jobs received from the queue: it is that record's own
 * permanent failure, sent to the queue's DLQ as `malformed-record` with the field named in its reason
 * attributes, and its neighbours run and are acknowledged (issue 24: it used to throw a TypeError that
 * failed the whole batch, so every batch-mate spent a receive). A record without a messageId cannot be
 * named in a response: once its DLQ has it, it is acknowledged like any poison message; if the DLQ refuses
 * it, the safe answer is the whole batch's failure (§2.3).
 */

let stack: WorkerStack;
beforeAll(async () => {
  stack = await WorkerStack.start();
}, 300_000);
afterAll(() => stack?.stop());
beforeEach(() => stack.reset());

type Malform = (record: SQSRecord) => unknown;
const without =
  (field: keyof SQSRecord): Malform =>
  (record) => {
    const { [field]: _dropped, ...rest } = record;
    return rest;
  };
const withField =
  (field: keyof SQSRecord, value: unknown): Malform =>
  (record) => ({ ...record, [field]: value });
const withAttribute =
  (name: string, value: unknown): Malform =>
  (record) => ({ ...record, attributes: { ...record.attributes, [name]: value } });

describe.each([QueueMode.Standard, QueueMode.Fifo])("a malformed SQS record on the %s queue", (mode) => {
  const queueOf = (): Queue => (mode === QueueMode.Fifo ? stack.fifo : stack.standard);

  /** Three jobs received from the queue (each FIFO job its own group); the middle record malformed. */
  async function batchWith(malform: Malform) {
    const queue = queueOf();
    const jobs = [
      job("text.stats", { text: "before" }),
      job("text.stats", { text: "middle" }),
      job("text.stats", { text: "after" }),
    ];
    await stack.send(
      queue,
      jobs.map((j, i) => ({ ...body(j), ...(mode === QueueMode.Fifo ? { group: `g-${i}` } : {}) })),
    );
    const received: SQSRecord[] = [];
    // fauxqs hands out one message per FIFO group per receive (§3 emulator note): read until all three came.
    while (received.length < 3) received.push(...(await stack.receive(queue)));
    const byText = (text: string) => received.find((r) => r.body.includes(`"${text}"`)) as SQSRecord;
    const middle = byText("middle");
    const records = [byText("before"), malform(structuredClone(middle)), byText("after")] as SQSRecord[];
    return { queue, jobs, middle, records };
  }

  it.each([
    ["without attributes", without("attributes"), "attributes", "required"],
    [
      "with attributes.ApproximateReceiveCount a number",
      withAttribute("ApproximateReceiveCount", 3),
      "attributes.ApproximateReceiveCount",
      "received number",
    ],
    [
      "with attributes.MessageGroupId a number",
      withAttribute("MessageGroupId", 7),
      "attributes.MessageGroupId",
      "received number",
    ],
    ["without body", without("body"), "body", "required"],
    [
      "with body an object nested 10,000 levels",
      withField("body", JSON.parse(nestedObjects(10_000))),
      "body",
      "received object",
    ],
    ["without messageId", without("messageId"), "messageId", "required"],
    ["that is null", () => null, "(root)", "received null"],
  ])(
    "a record %s goes to the DLQ as malformed-record naming the field; its neighbours run",
    async (_name, malform, path, message) => {
      const { queue, jobs, middle, records } = await batchWith(malform);
      const { response, summary } = await processToolCallJobs(records, lambdaContext(), stack.deps(mode));

      expect(response).toEqual({ batchItemFailures: [] });
      expect(summary).toMatchObject({ succeeded: 2, deadLettered: 1, retried: 0 });
      expect(await stack.call(jobs[0]?.callId ?? "")).toMatchObject({ status: "completed" });
      expect(await stack.call(jobs[2]?.callId ?? "")).toMatchObject({ status: "completed" });
      expect(await stack.call(jobs[1]?.callId ?? "")).toBeUndefined();

      const dead = await stack.drain(queue.dlqUrl);
      expect(dead).toHaveLength(1);
      const reason = dead[0]?.attributes[DeadLetterAttribute.ReasonMessage] ?? "";
      expect(dead[0]?.attributes[DeadLetterAttribute.ReasonCode]).toBe("malformed-record");
      expect(reason).toContain(`${path}: `);
      expect(reason).toContain(message);
      const sent = records[1] as unknown as Record<string, unknown> | null;
      // The body as it was when there is one; what the function received otherwise, bounded, so nothing it had is dropped.
      if (typeof sent?.body === "string") expect(dead[0]?.body).toBe(sent.body);
      else expect(dead[0]?.body).toMatch(/^malformed SQS record, no body to send; as received: /);
      expect(dead[0]?.body.length).toBeLessThan(20_000);
      expect(dead[0]?.attributes[DeadLetterAttribute.SourceMessageId]).toBe(
        typeof sent?.messageId === "string" ? middle.messageId : "-",
      );
    },
  );

  it("a record without eventSourceARN but with a good job runs: the ARN only serves the retry backoff", async () => {
    const { jobs, records } = await batchWith(without("eventSourceARN"));
    const { response, summary } = await processToolCallJobs(records, lambdaContext(), stack.deps(mode));
    expect(response).toEqual({ batchItemFailures: [] });
    expect(summary).toMatchObject({ succeeded: 3, deadLettered: 0 });
    expect(await stack.call(jobs[1]?.callId ?? "")).toMatchObject({ status: "completed" });
  });

  it("a record without a messageId that the DLQ refuses fails the whole batch with a clear error (no response can name it, §2.3)", async () => {
    const { records } = await batchWith(without("messageId"));
    const refusing = stack.deps(mode, {
      deadLetter: async () => {
        throw new Error("injected: the DLQ is unavailable");
      },
    });
    await expect(processToolCallJobs(records, lambdaContext(), refusing)).rejects.toMatchObject({
      name: "InvalidBatchResponseError",
      message: expect.stringMatching(
        /^record 1 of the batch must be delivered again but has no readable messageId/,
      ),
    });
  });

  it("a malformed record with a messageId that the DLQ refuses is reported alone by its messageId", async () => {
    const { middle, records } = await batchWith(without("attributes"));
    const refusing = stack.deps(mode, {
      deadLetter: async () => {
        throw new Error("injected: the DLQ is unavailable");
      },
    });
    const { response, summary } = await processToolCallJobs(records, lambdaContext(), refusing);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: middle.messageId }] });
    expect(summary).toMatchObject({ succeeded: 2, retried: 1 });
  });
});
