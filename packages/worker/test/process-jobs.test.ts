import { GetObjectCommand } from "@aws-sdk/client-s3";
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { DeadLetterAttribute, ESM_SYSTEM_ATTRIBUTES, sqsClient, toSqsEventRecord } from "@mcp-pipeline/aws";
import { lambdaContext, startMotoServer } from "@mcp-pipeline/testing";
import { emulatorClientOptions, type RunningEmulator } from "@mcp-pipeline/testing/emulators";
import type { SQSRecord } from "aws-lambda";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { processToolCallJobs, resultKeyFor } from "../src/index.js";
import { body, job, WorkerStack } from "./stack.js";

let stack: WorkerStack;
/** moto's server: the FIFO ordering test receives its batch the way SQS returns it (§3). */
let moto: RunningEmulator;
beforeAll(async () => {
  [stack, moto] = await Promise.all([WorkerStack.start(), startMotoServer()]);
}, 300_000);
afterAll(async () => {
  await Promise.all([stack?.stop(), moto?.stop()]);
});
beforeEach(async () => {
  await stack.reset();
});

const ok = (tag: string) => ({ path: `/ok/${tag}` });
const ids = (response: { batchItemFailures: readonly { itemIdentifier: unknown }[] }) =>
  response.batchItemFailures.map((f) => f.itemIdentifier);

describe("tool-worker on a standard queue (esm-semantics.md §2)", () => {
  it("a batch of 10 with a tool timeout and a body that is not JSON: 8 stored, 1 reported, 1 in the DLQ", async () => {
    const jobs = Array.from({ length: 8 }, (_, i) => job("http.request", ok(`job-${i}`)));
    const slow = job("http.request", { path: "/slow/one" });
    await stack.send(stack.standard, [
      ...jobs.slice(0, 4).map(body),
      body(slow),
      { body: "{ this is not json" },
      ...jobs.slice(4).map(body),
    ]);
    const records = await stack.receive(stack.standard);
    expect(records).toHaveLength(10);

    const { response, summary } = await processToolCallJobs(
      records,
      lambdaContext({ timeoutMs: 30_000 }),
      stack.deps("standard"),
    );

    const slowRecord = records.find((r) => r.body.includes(slow.callId));
    expect(ids(response)).toEqual([slowRecord?.messageId]);
    expect(summary).toMatchObject({ messages: 10, succeeded: 8, deadLettered: 1, retried: 1 });
    for (const j of jobs) {
      const call = await stack.call(j.callId);
      expect(call?.status).toBe("completed");
      expect(JSON.parse(call?.output ?? "null")).toMatchObject({ status: 200 });
    }
    // The timed-out call is not stored as an outcome; a retryable failure is published and SQS retries it.
    expect(await stack.call(slow.callId)).toBeUndefined();
    const failed = (await stack.events()).filter(
      (e) => e.callId === slow.callId && e.type === "tool_call.failed",
    );
    expect(failed).toMatchObject([{ error: { code: "tool-timeout", retryable: true } }]);

    const dead = await stack.drain(stack.standard.dlqUrl);
    expect(dead).toHaveLength(1);
    expect(dead[0]?.body).toBe("{ this is not json");
    expect(dead[0]?.attributes).toMatchObject({
      [DeadLetterAttribute.ReasonCode]: "bad-json",
      [DeadLetterAttribute.SourceQueueArn]: stack.standard.arn,
      [DeadLetterAttribute.SourceMessageId]: records.find((r) => r.body.startsWith("{ this"))?.messageId,
    });
    expect(dead[0]?.attributes[DeadLetterAttribute.ReasonMessage]).toMatch(/JSON/);
  });

  it.each([
    [
      "a schema violation",
      JSON.stringify({ specVersion: "1.0", callId: "c", tool: "x" }),
      "schema-violation",
    ],
    ["an unsupported version", encodeWithVersion("2.0"), "unsupported-version"],
  ])("sends %s to the DLQ at once, acknowledged", async (_label, text, code) => {
    await stack.send(stack.standard, [{ body: text }]);
    const records = await stack.receive(stack.standard);
    const { response, summary } = await processToolCallJobs(records, lambdaContext(), stack.deps("standard"));
    expect(ids(response)).toEqual([]);
    expect(summary.deadLettered).toBe(1);
    const [dead] = await stack.drain(stack.standard.dlqUrl);
    expect(dead?.attributes[DeadLetterAttribute.ReasonCode]).toBe(code);
  });

  it("reports a poison message when the DLQ cannot take it, so it is not lost", async () => {
    await stack.send(stack.standard, [{ body: "nope" }]);
    const records = await stack.receive(stack.standard);
    const deps = stack.deps("standard", {
      deadLetter: async () => Promise.reject(new Error("AWS.SimpleQueueService.NonExistentQueue")),
    });
    const { response } = await processToolCallJobs(records, lambdaContext(), deps);
    expect(ids(response)).toEqual([records[0]?.messageId]);
  });

  it("stores permanent failures as failed results and acknowledges them", async () => {
    const cases = [
      job("no.such.tool", {}),
      job("http.request", { path: 42 }),
      job("http.request", ok("late"), { deadline: new Date(Date.now() - 60_000).toISOString() }),
      job("load.latency", { latencyMs: 0, fail: "permanent" }),
      job("http.request", { path: "/status/404/missing" }),
    ];
    await stack.send(stack.standard, cases.map(body));
    const records = await stack.receive(stack.standard);
    const { response, summary } = await processToolCallJobs(records, lambdaContext(), stack.deps("standard"));

    expect(ids(response)).toEqual([]);
    expect(summary.failedPermanently).toBe(5);
    const codes = await Promise.all(cases.map(async (c) => (await stack.call(c.callId))?.error?.code));
    expect(codes).toEqual([
      "unknown-tool",
      "invalid-arguments",
      "deadline-passed",
      "injected-permanent",
      "downstream-4xx",
    ]);
    for (const c of cases) expect((await stack.call(c.callId))?.status).toBe("failed");
    // The failure is also on the stream for other consumers, as a non-retryable failed event.
    const failed = (await stack.events()).filter((e) => e.type === "tool_call.failed");
    expect(failed.map((e) => e.type === "tool_call.failed" && e.error.retryable)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it("reaches the DLQ after maxReceiveCount receives when a job always fails transiently", async () => {
    const doomed = job("http.request", { path: "/status/503/always" });
    await stack.send(stack.standard, [body(doomed)]);
    const deps = stack.deps("standard");
    let invocations = 0;
    for (let receive = 0; receive < 5; receive++) {
      const records = await stack.receive(stack.standard);
      if (records.length === 0) break;
      invocations += 1;
      expect(records[0]?.attributes.ApproximateReceiveCount).toBe(String(invocations));
      const { response } = await processToolCallJobs(records, lambdaContext(), deps);
      expect(ids(response)).toEqual([records[0]?.messageId]);
      await stack.settle(stack.standard, records, response);
    }
    // maxReceiveCount is 3: three deliveries, then SQS moved it to the DLQ (§2.3).
    expect(invocations).toBe(3);
    const dead = await stack.drain(stack.standard.dlqUrl);
    expect(dead.map((d) => d.body)).toEqual([body(doomed).body]);
    const retryable = (await stack.events()).filter((e) => e.type === "tool_call.failed");
    expect(retryable).toMatchObject(Array(3).fill({ error: { code: "downstream-5xx", retryable: true } }));
    const attempts = (await stack.events())
      .filter((e) => e.type === "tool_call.started")
      .map((e) => e.attempt);
    expect(attempts).toEqual([1, 2, 3]);
  });

  it("runs a job delivered twice in one batch, and again later, once", async () => {
    const once = job("http.request", ok("once"));
    await stack.send(stack.standard, [body(once), body(once)]);
    const deps = stack.deps("standard");
    const before = stack.downstream.requests.length;

    const first = await stack.receive(stack.standard);
    expect(first).toHaveLength(2);
    const concurrent = await processToolCallJobs(first, lambdaContext(), deps);
    // One copy ran; the other found the call claimed and was reported, to come back later.
    expect(concurrent.summary.succeeded).toBe(1);
    expect(ids(concurrent.response)).toHaveLength(1);
    await stack.settle(stack.standard, first, concurrent.response);

    const again = await stack.receive(stack.standard);
    const redelivered = await processToolCallJobs(again, lambdaContext(), deps);
    expect(redelivered.summary.duplicates).toBe(1);
    expect(ids(redelivered.response)).toEqual([]);
    // A third copy, sent after completion, is not run either.
    await stack.send(stack.standard, [body(once)]);
    const late = await processToolCallJobs(await stack.receive(stack.standard), lambdaContext(), deps);
    expect(late.summary.duplicates).toBe(1);

    expect(stack.downstream.requests.slice(before)).toEqual(["/ok/once"]);
  });

  it("runs one job delivered to two concurrent invocations once", async () => {
    const shared = job("load.latency", { latencyMs: 200 });
    const deps = stack.deps("standard");
    await stack.send(stack.standard, [body(shared)]);
    const [a] = await stack.receive(stack.standard);
    await stack.send(stack.standard, [body(shared)]);
    const [b] = await stack.receive(stack.standard);
    if (!a || !b) throw new Error("expected two deliveries");
    const [ra, rb] = await Promise.all([
      processToolCallJobs([a], lambdaContext(), deps),
      processToolCallJobs([b], lambdaContext(), deps),
    ]);
    expect(ra.summary.succeeded + rb.summary.succeeded).toBe(1);
    expect(ids(ra.response).length + ids(rb.response).length).toBe(1);
    const started = (await stack.events()).filter((e) => e.type === "tool_call.started");
    expect(started).toHaveLength(1);
  });

  it("stores a large result in S3 with a pointer, a small one in the table", async () => {
    const big = job("load.latency", { latencyMs: 0, resultBytes: 10_000 });
    const small = job("load.latency", { latencyMs: 0, resultBytes: 10 });
    await stack.send(stack.standard, [body(big), body(small)]);
    await processToolCallJobs(await stack.receive(stack.standard), lambdaContext(), stack.deps("standard"));

    const bigCall = await stack.call(big.callId);
    expect(bigCall?.result?.location).toEqual({
      kind: "s3",
      bucket: stack.names.bucket,
      key: resultKeyFor(big.callId),
    });
    expect(bigCall?.output).toBeUndefined();
    const object = await stack.s3.send(
      new GetObjectCommand({ Bucket: stack.names.bucket, Key: resultKeyFor(big.callId) }),
    );
    const stored = JSON.parse(await (object.Body?.transformToString() ?? Promise.resolve("null")));
    expect(stored.payload).toHaveLength(10_000);
    expect(bigCall?.result?.sizeBytes).toBe(Buffer.byteLength(JSON.stringify(stored)));

    const smallCall = await stack.call(small.callId);
    expect(smallCall?.result?.location).toEqual({ kind: "inline" });
    expect(JSON.parse(smallCall?.output ?? "null").payload).toBe("x".repeat(10));
  });

  it("publishes started then completed for each job, partitioned by session", async () => {
    const j = job("text.stats", { text: "a b c" }, { sessionId: "session-42" });
    await stack.send(stack.standard, [body(j)]);
    await processToolCallJobs(await stack.receive(stack.standard), lambdaContext(), stack.deps("standard"));
    const events = (await stack.events()).filter((e) => e.callId === j.callId);
    expect(events.map((e) => e.type)).toEqual(["tool_call.started", "tool_call.completed"]);
    expect(events.every((e) => e.sessionId === "session-42")).toBe(true);
  });

  it("publishes the stored outcome without running the tool when a worker died before publishing it", async () => {
    const j = job("http.request", ok("crash"));
    await stack.send(stack.standard, [body(j)]);
    const records = await stack.receive(stack.standard);
    // The first delivery stores the result, then the stream is unreachable: reported for retry.
    const crashing = stack.deps("standard", {
      publish: async (events) => {
        if (events.some((e) => e.type === "tool_call.completed")) throw new Error("connect ECONNREFUSED");
      },
    });
    const first = await processToolCallJobs(records, lambdaContext(), crashing);
    expect(ids(first.response)).toHaveLength(1);
    expect((await stack.call(j.callId))?.status).toBe("completed");
    await stack.settle(stack.standard, records, first.response);

    const requests = stack.downstream.requests.length;
    const retry = await processToolCallJobs(
      await stack.receive(stack.standard),
      lambdaContext(),
      stack.deps("standard"),
    );
    expect(ids(retry.response)).toEqual([]);
    expect(stack.downstream.requests.length).toBe(requests);
    const completed = (await stack.events()).filter((e) => e.type === "tool_call.completed");
    expect(completed.map((e) => e.eventId)).toEqual([(await stack.call(j.callId))?.statusEvent.eventId]);
  });

  it("reports jobs it did not start when the invocation's remaining time runs low", async () => {
    const jobs = Array.from({ length: 6 }, () => job("load.latency", { latencyMs: 300 }));
    await stack.send(stack.standard, jobs.map(body));
    const records = await stack.receive(stack.standard);
    const context = lambdaContext({ timeoutMs: 1_500 });
    // Two at a time with a 1 s margin: the first pair fits; the next gets only what is left above the
    // margin (its tool times out, reported); after that nothing starts (reported, not started).
    const { response, summary } = await processToolCallJobs(
      records,
      context,
      stack.deps("standard", { concurrency: 2 }),
    );
    expect(summary.deadlineReached).toBe(true);
    expect(summary.succeeded).toBeGreaterThanOrEqual(2);
    expect(summary.notStarted).toBeGreaterThan(0);
    expect(ids(response)).toHaveLength(summary.retried);
    expect(summary.succeeded + summary.retried).toBe(6);
  });
});

/** One ReceiveMessage from a FIFO queue on moto's server holding `messages`, as the ESM's batch. */
async function receivedFromMoto(
  messages: readonly { body: string; group: string }[],
  eventSourceArn: string,
): Promise<SQSRecord[]> {
  const sqs = sqsClient(emulatorClientOptions(moto));
  const { QueueUrl = "" } = await sqs.send(
    new CreateQueueCommand({ QueueName: `fifo-order-${Date.now()}.fifo`, Attributes: { FifoQueue: "true" } }),
  );
  for (const [i, m] of messages.entries()) {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl,
        MessageBody: m.body,
        MessageGroupId: m.group,
        MessageDeduplicationId: `m-${i}`,
      }),
    );
  }
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl,
      MaxNumberOfMessages: 10,
      MessageSystemAttributeNames: ESM_SYSTEM_ATTRIBUTES,
      MessageAttributeNames: ["All"],
    }),
  );
  return Messages.map((m) => toSqsEventRecord(m, eventSourceArn));
}

describe("fifo-worker on a FIFO queue (esm-semantics.md §3)", () => {
  it("three groups with a failure in the middle of one: the rest of that group reported, others done in order", async () => {
    const group = (g: string, paths: string[]) =>
      paths.map((p) => ({ ...body(job("http.request", { path: p }, { sessionId: g })), group: g }));
    const a = group("A", ["/ok/A1", "/ok/A2", "/ok/A3"]);
    const b = group("B", ["/ok/B1", "/status/503/B2", "/ok/B3", "/ok/B4"]);
    const c = group("C", ["/ok/C1", "/ok/C2", "/ok/C3"]);
    // Interleaved as they arrive from three sessions, sent to a FIFO queue on moto's server and received
    // once, as the ESM does: SQS (and moto) return several messages of a group in one receive, in order
    // (§3); fauxqs would return one message per group.
    const arrivals = [a[0], b[0], c[0], a[1], b[1], c[1], a[2], b[2], c[2], b[3]].flatMap((m) =>
      m ? [m] : [],
    );
    const records = await receivedFromMoto(arrivals, stack.fifo.arn);
    expect(records.map((r) => r.attributes.MessageGroupId)).toEqual(arrivals.map((m) => m.group));

    const before = stack.downstream.requests.length;
    const { response, summary } = await processToolCallJobs(records, lambdaContext(), stack.deps("fifo"));

    const reported = ids(response).map((id) => records.find((r) => r.messageId === id)?.body ?? "");
    expect(reported.map((r) => JSON.parse(r).arguments.path)).toEqual(["/status/503/B2", "/ok/B3", "/ok/B4"]);
    expect(summary).toMatchObject({ succeeded: 7, retried: 3 });
    const seen = stack.downstream.requests.slice(before);
    expect(seen.filter((p) => p.includes("A"))).toEqual(["/ok/A1", "/ok/A2", "/ok/A3"]);
    expect(seen.filter((p) => p.includes("C"))).toEqual(["/ok/C1", "/ok/C2", "/ok/C3"]);
    // B stopped at its failure: B3 and B4 never ran.
    expect(seen.filter((p) => p.includes("B"))).toEqual(["/ok/B1", "/status/503/B2"]);
  });

  it("sends a poison message of a group to the FIFO DLQ with its group, and the group goes on", async () => {
    const after = job("http.request", { path: "/ok/after-poison" }, { sessionId: "G" });
    await stack.send(stack.fifo, [
      { body: "garbage", group: "G" },
      { ...body(after), group: "G" },
    ]);
    const deps = stack.deps("fifo");
    const first = await stack.receive(stack.fifo);
    const poisoned = await processToolCallJobs(first, lambdaContext(), deps);
    expect(ids(poisoned.response)).toEqual([]);
    expect(poisoned.summary.deadLettered).toBe(1);
    await stack.settle(stack.fifo, first, poisoned.response);
    // The group is not stuck: its next message comes and runs.
    const next = await processToolCallJobs(await stack.receive(stack.fifo), lambdaContext(), deps);
    expect(next.summary.succeeded).toBe(1);
    const [dead] = await stack.drain(stack.fifo.dlqUrl);
    expect(dead?.body).toBe("garbage");
    expect(dead?.attributes[DeadLetterAttribute.ReasonCode]).toBe("bad-json");
  });
});

function encodeWithVersion(version: string): string {
  const j = job("text.stats", { text: "x" });
  return JSON.stringify({ ...j, specVersion: version });
}
