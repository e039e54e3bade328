import { DeadLetterAttribute } from "@mcp-pipeline/aws";
import { decodeToolCallJob } from "@mcp-pipeline/contracts";
import {
  assertNoPrototypePollution,
  asText,
  type BadInput,
  type BadInputExpectations,
  badDocuments,
  badInputTable,
  DECODE_ERROR_CLASS,
  type DecodeErrorCode,
  lambdaContext,
  sqsRecord,
  toolCallJobShape,
} from "@mcp-pipeline/emulators/testing";
import type { SQSRecord } from "aws-lambda";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { processToolCallJobs, QueueMode } from "../../src/index.js";
import { body, job, type Queue, WorkerStack } from "../stack.js";

/**
 * SQS bodies, the workers' boundary (tool-worker on the standard queue, fifo-worker on the FIFO queue;
 * issue 13 §4): every bad body of the corpus, sent to the queue with a good job before and after it, is
 * acknowledged only once its DLQ holds it, body unchanged, with the reason in message attributes
 * (docs/aws-semantics.md §2.3); the good jobs run. Bodies of 256 KiB included (§2.5). A body is text, so
 * the corpus's invalid UTF-8 arrives as SQS and the SDK decode it: with U+FFFD in place of the bad bytes.
 */

const corpus = badDocuments(toolCallJobShape({ sessionId: "session-bad", callId: "call-bad" }));

let stack: WorkerStack;
beforeAll(async () => {
  stack = await WorkerStack.start();
}, 300_000);
afterAll(() => stack?.stop());
beforeEach(() => stack.reset());

describe.each([QueueMode.Standard, QueueMode.Fifo])("SQS bodies on the %s queue", (mode) => {
  const queueOf = (): Queue => (mode === QueueMode.Fifo ? stack.fifo : stack.standard);

  /** Receives until the queue has handed over `count` messages, as the event source mapping would. */
  async function receiveAll(queue: Queue, count: number): Promise<SQSRecord[]> {
    const records: SQSRecord[] = [];
    while (records.length < count) records.push(...(await stack.receive(queue)));
    return records;
  }

  /** The bad body between two good jobs (each FIFO message its own group): what became of each. */
  async function run(input: BadInput<Uint8Array>) {
    const queue = queueOf();
    const before = job("text.stats", { text: "before" });
    const after = job("text.stats", { text: "after" });
    const bad = asText(input.value);
    const group = (g: string) => (mode === QueueMode.Fifo ? { group: g } : {});
    await stack.send(queue, [
      { ...body(before), ...group("g-before") },
      { body: bad, ...group("g-bad") },
      { ...body(after), ...group("g-after") },
    ]);
    const records = await receiveAll(queue, 3);
    const badRecord = records.find((r) => r.body === bad);
    expect(badRecord, "SQS delivers the body as it was sent").toBeDefined();
    const { response, summary } = await processToolCallJobs(records, lambdaContext(), stack.deps(mode));
    assertNoPrototypePollution();
    // Acknowledged: never reported for retry; so it must be in the DLQ or have run.
    expect(response).toEqual({ batchItemFailures: [] });
    for (const callId of [before.callId, after.callId])
      expect(await stack.call(callId), callId).toMatchObject({ status: "completed" });
    return { badRecord: badRecord as SQSRecord, summary, dead: await stack.drain(queue.dlqUrl) };
  }

  /** In the DLQ with its body and the reason, naming the field for a schema violation. */
  async function expectDeadLettered(
    input: BadInput<Uint8Array>,
    code: Exclude<DecodeErrorCode, "bad-encoding">,
    path?: string,
  ) {
    const { badRecord, summary, dead } = await run(input);
    expect(summary).toMatchObject({ deadLettered: 1, succeeded: 2, retried: 0 });
    expect(dead).toHaveLength(1);
    expect(dead[0]?.body === badRecord.body).toBe(true);
    const decoded = decodeToolCallJob(badRecord.body);
    expect(decoded.ok).toBe(false);
    if (decoded.ok) return;
    expect(decoded.error.name).toBe(DECODE_ERROR_CLASS[code]);
    expect(dead[0]?.attributes).toMatchObject({
      [DeadLetterAttribute.ReasonCode]: code,
      [DeadLetterAttribute.ReasonMessage]: decoded.error.message.slice(0, 1024),
      [DeadLetterAttribute.SourceMessageId]: badRecord.messageId,
    });
    if (path !== undefined) expect(decoded.error.message).toContain(`${path}:`);
    // What the reason echoes of the body is bounded, whatever the body holds.
    expect(decoded.error.message.length).toBeLessThanOrEqual(1_024);
  }

  /** Read as a job: it ran (or failed for good, stored as such), and nothing was planted anywhere. */
  async function expectRun(input: BadInput<Uint8Array>, status: "completed" | "failed") {
    const { summary, dead } = await run(input);
    expect(dead).toEqual([]);
    expect(summary).toMatchObject({ deadLettered: 0, retried: 0 });
    expect(await stack.call("call-bad")).toMatchObject({ status });
  }

  /**
   * SQS refuses an empty body (a body is at least one character, §2.5): the producer gets the error and no
   * function sees the message. Were one delivered, its DLQ would refuse it as well, so the worker reports
   * it for retry instead of acknowledging it, and the queue's redrive policy keeps it (§2.3).
   */
  async function expectRefusedBySqs(input: BadInput<Uint8Array>) {
    const queue = queueOf();
    const group = mode === QueueMode.Fifo ? { group: "g" } : {};
    await expect(stack.send(queue, [{ body: asText(input.value), ...group }])).rejects.toMatchObject({
      name: expect.stringMatching(/MissingParameter$/),
    });
    const record = sqsRecord({
      messageId: "m-empty",
      body: "",
      queueArn: queue.arn,
      ...(mode === QueueMode.Fifo ? { groupId: "g" } : {}),
    });
    const { response, summary } = await processToolCallJobs([record], lambdaContext(), stack.deps(mode));
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "m-empty" }] });
    expect(summary).toMatchObject({ deadLettered: 0, retried: 1 });
    expect(await stack.drain(queue.dlqUrl)).toEqual([]);
  }

  const expectations: BadInputExpectations<Uint8Array> = {
    empty: (input) => {
      if (input.name === "no bytes") return expectRefusedBySqs(input);
      if (input.name === "{}") return expectDeadLettered(input, "schema-violation", "specVersion");
      return expectDeadLettered(input, "bad-json");
    },
    // A body cut inside a character reaches the worker with U+FFFD for the cut byte, then ends: not JSON.
    truncated: (input) => expectDeadLettered(input, "bad-json"),
    oversized: (input) => expectDeadLettered(input, "schema-violation", "tool"),
    "wrong type": (input) => {
      // A session id is any string: "1" is one.
      if (input.name === "sessionId a string") return expectRun(input, "completed");
      return expectDeadLettered(
        input,
        "schema-violation",
        input.name.startsWith("tool ") ? "tool" : "(root)",
      );
    },
    "wrong version": (input) => expectDeadLettered(input, "unsupported-version"),
    "invalid UTF-8": (input) => expectDeadLettered(input, "schema-violation", "tool"),
    "deeply nested": (input) => {
      if (input.name.endsWith("a key the format does not have")) return expectRun(input, "completed");
      // text.stats takes no other argument: refused by the tool's input schema, stored as failed.
      if (input.name.endsWith("in arguments")) return expectRun(input, "failed");
      // The error names the version it refuses, bounded: the whole value would throw RangeError (issue 24).
      if (input.name.endsWith("in specVersion")) return expectDeadLettered(input, "unsupported-version");
      return expectDeadLettered(input, "schema-violation", input.name.includes("arrays") ? "(root)" : "tool");
    },
    "hostile values": (input) => {
      switch (input.name) {
        case "every field under __proto__":
          return expectDeadLettered(input, "schema-violation", "specVersion");
        case "__proto__ and constructor.prototype beside the fields":
        case 'sessionId "NaN"':
        case 'sessionId "Infinity"':
          return expectRun(input, "completed");
        case "__proto__ and constructor.prototype in arguments":
          return expectRun(input, "failed");
        default:
          return expectDeadLettered(input, "schema-violation", input.name.split(" ")[0]);
      }
    },
  };

  it.each(badInputTable(corpus, expectations))("$label", ({ run }) => run());
});
