import { createHash } from "node:crypto";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { DeadLetterAttribute } from "@mcp-pipeline/aws";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { TransientError } from "@mcp-pipeline/contracts";
import {
  ESM_SYSTEM_ATTRIBUTES,
  emulatorClientOptions,
  type RunningEmulator,
  toSqsEventRecord,
} from "@mcp-pipeline/emulators";
import { lambdaContext, startMotoServer } from "@mcp-pipeline/emulators/testing";
import { defineTool, ToolRegistry } from "@mcp-pipeline/tools/registry";
import { compileWithAjv } from "@mcp-pipeline/tools/registry/ajv";
import type { SQSRecord } from "aws-lambda";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { processToolCallJobs } from "../../src/index.js";
import { body, ESM_VISIBILITY_SECONDS, job, WorkerStack } from "../stack.js";

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

/** How long a test waits for the mapping to reach a state: a bound for a broken run, not a speed assertion. */
const ESM_WAIT = { timeout: 120_000, interval: 100 };

/** Waits until the DLQ holds `count` messages, and returns them. */
async function deadLettered(dlqUrl: string, count: number) {
  const dead: Awaited<ReturnType<WorkerStack["drain"]>> = [];
  await vi.waitFor(async () => {
    dead.push(...(await stack.drain(dlqUrl)));
    expect(dead).toHaveLength(count);
  }, ESM_WAIT);
  return dead;
}
const ids = (response: { batchItemFailures: readonly { itemIdentifier: unknown }[] }) =>
  response.batchItemFailures.map((f) => f.itemIdentifier);

describe("tool-worker on a standard queue (docs/aws-semantics.md §2)", () => {
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
    // The timed-out call is not stored as an outcome (only taken, with its `started`); a retryable failure
    // is published and SQS retries it.
    const slowCall = await stack.call(slow.callId);
    expect(slowCall?.status).toBe("started");
    expect(slowCall).not.toHaveProperty("result");
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

  it("a poison message dead-lettered by an invocation that then failed is sent again on redelivery, and every copy carries what dedupes it", async () => {
    await stack.reset(3, ESM_VISIBILITY_SECONDS);
    await stack.send(stack.standard, [{ body: "{ poison" }]);
    const deps = stack.deps("standard");
    const first = await stack.receive(stack.standard);
    const sent = await processToolCallJobs(first, lambdaContext(), deps);
    expect(sent.summary.deadLettered).toBe(1);
    // The invocation fails after the DLQ took the message (a timeout, a crash): its response never
    // reaches the mapping, which deletes nothing, and the message comes back (§2.3). The same job is also
    // sent again by its producer: another message with the same body.
    await stack.send(stack.standard, [{ body: "{ poison" }]);
    const esm = await stack.esm(stack.standard, () => deps);
    // A standard DLQ keeps every copy.
    const dead = await deadLettered(stack.standard.dlqUrl, 3).finally(() => esm.stop());
    const delivered = esm.invocations.flatMap((i) => i.records);
    expect(
      delivered.find((r) => r.messageId === first[0]?.messageId)?.attributes.ApproximateReceiveCount,
    ).toBe("2");
    const resent = delivered.filter((r) => r.messageId !== first[0]?.messageId);
    const digest = createHash("sha256").update("{ poison").digest("hex");
    const identity = dead
      .map((d) => ({
        messageId: d.attributes[DeadLetterAttribute.SourceMessageId],
        receiveCount: d.attributes[DeadLetterAttribute.SourceReceiveCount],
        digest: d.attributes[DeadLetterAttribute.BodySha256],
      }))
      .sort((a, b) => `${a.messageId}${a.receiveCount}`.localeCompare(`${b.messageId}${b.receiveCount}`));
    expect(identity).toEqual(
      [
        { messageId: first[0]?.messageId, receiveCount: "1", digest },
        { messageId: first[0]?.messageId, receiveCount: "2", digest },
        { messageId: resent[0]?.messageId, receiveCount: "1", digest },
      ].sort((a, b) => `${a.messageId}${a.receiveCount}`.localeCompare(`${b.messageId}${b.receiveCount}`)),
    );
    // What docs/tool-workers.md tells an operator: one entry per source message (lowest receive count),
    // and the body digest to see that two messages carried the same job.
    const perMessage = new Set(identity.map((i) => i.messageId));
    expect(perMessage.size).toBe(2);
    expect(new Set(identity.map((i) => i.digest)).size).toBe(1);
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
    // The event source mapping retries: a reported message comes back after the visibility timeout.
    await stack.reset(3, ESM_VISIBILITY_SECONDS);
    const doomed = job("http.request", { path: "/status/503/always" });
    await stack.send(stack.standard, [body(doomed)]);
    const deps = stack.deps("standard");
    const esm = await stack.esm(stack.standard, () => deps);
    const dead = await deadLettered(stack.standard.dlqUrl, 1).finally(() => esm.stop());
    // maxReceiveCount is 3: three deliveries, each reported, then SQS moved it to the DLQ (§2.3).
    expect(esm.invocations.map((i) => i.records.map((r) => r.attributes.ApproximateReceiveCount))).toEqual([
      ["1"],
      ["2"],
      ["3"],
    ]);
    for (const { records, result } of esm.invocations) {
      expect(ids(result.response)).toEqual([records[0]?.messageId]);
    }
    expect(dead.map((d) => d.body)).toEqual([body(doomed).body]);
    const retryable = (await stack.events()).filter((e) => e.type === "tool_call.failed");
    expect(retryable).toMatchObject(Array(3).fill({ error: { code: "downstream-5xx", retryable: true } }));
    const attempts = (await stack.events())
      .filter((e) => e.type === "tool_call.started")
      .map((e) => e.attempt);
    expect(attempts).toEqual([1, 2, 3]);
  });

  it("a job that always fails transiently is dead-lettered in the table once SQS moves it to the DLQ, and its redrive moves the call on", async () => {
    let healthy = false;
    const registry = new ToolRegistry(
      [
        defineTool({
          name: "test.flaky",
          description: "Fails transiently until the downstream is healthy.",
          inputSchema: { type: "object" },
          timeoutMs: 10_000,
          concurrency: 4,
          run: async () => {
            if (!healthy) throw new TransientError("downstream-5xx", "HTTP 503 (test)");
            return { ok: true };
          },
        }),
      ],
      compileWithAjv(),
    );
    await stack.reset(3, ESM_VISIBILITY_SECONDS);
    const doomed = job("test.flaky", {});
    await stack.send(stack.standard, [body(doomed)]);
    // maxReceiveCount is 3 (stack.reset); the worker is told so.
    const deps = stack.deps("standard", {
      registry,
      deadLetterAfter: { maxReceiveCount: 3, queue: stack.standard.dlqUrl },
    });
    const esm = await stack.esm(stack.standard, () => deps);
    try {
      const [dead] = await deadLettered(stack.standard.dlqUrl, 1);
      // Only the third (last) attempt is recorded as leaving; then SQS moved the message (§2.3).
      expect(esm.invocations.map((i) => i.result.summary.leavingForDlq)).toEqual([0, 0, 1]);
      expect(dead?.body).toBe(body(doomed).body);
      expect(await stack.call(doomed.callId)).toMatchObject({
        status: "dead-lettered",
        deadLetter: { queue: stack.standard.dlqUrl, attempt: 3 },
        error: { code: "downstream-5xx", retryable: true },
      });

      // Redrive (a move makes a new message, receive count 1, §4) once the downstream is healthy.
      healthy = true;
      await stack.send(stack.standard, [{ body: dead?.body ?? "" }]);
      await vi.waitFor(() => expect(esm.invocations).toHaveLength(4), ESM_WAIT);
    } finally {
      await esm.stop();
    }
    expect(esm.invocations[3]?.result.summary).toMatchObject({ succeeded: 1, leavingForDlq: 0 });
    const call = await stack.call(doomed.callId);
    expect(call).toMatchObject({ status: "completed", attempts: 3 });
    expect(call).not.toHaveProperty("deadLetter");
  });

  it("runs a job delivered twice in one batch, and again later, once", async () => {
    await stack.reset(3, ESM_VISIBILITY_SECONDS);
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

    // That response never reached a mapping, so both copies come back after the visibility timeout
    // (§2.3), with a third copy sent after completion: the mapping delivers all three, and none runs.
    await stack.send(stack.standard, [body(once)]);
    const esm = await stack.esm(stack.standard, () => deps);
    await vi
      .waitFor(() => expect(esm.invocations.flatMap((i) => i.records)).toHaveLength(3), ESM_WAIT)
      .finally(() => esm.stop());
    const summaries = esm.invocations.map((i) => i.result.summary);
    expect(summaries.reduce((n, s) => n + s.duplicates, 0)).toBe(
      esm.invocations.reduce((n, i) => n + i.records.length, 0),
    );
    expect(esm.invocations.flatMap((i) => ids(i.result.response))).toEqual([]);

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
    const location = bigCall?.result?.location;
    if (location?.kind !== "s3") throw new Error(`expected an S3 pointer, got ${JSON.stringify(location)}`);
    expect(location.bucket).toBe(stack.names.bucket);
    // The run's own key under the call: results/<callId>/<runId>.json.
    expect(location.key).toMatch(/^results\/call-\d+\/[0-9a-f-]{36}\.json$/);
    expect(location.key.startsWith(`results/${big.callId}/`)).toBe(true);
    expect(bigCall?.output).toBeUndefined();
    const object = await stack.s3.send(new GetObjectCommand({ Bucket: location.bucket, Key: location.key }));
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
    await stack.reset(3, ESM_VISIBILITY_SECONDS);
    const j = job("http.request", ok("crash"));
    await stack.send(stack.standard, [body(j)]);
    // The first delivery stores the result, then the stream is unreachable: reported for retry. The
    // mapping delivers it again (§2.3), to a worker whose stream works.
    const crashing = stack.deps("standard", {
      publish: async (events) => {
        if (events.some((e) => e.type === "tool_call.completed")) throw new Error("connect ECONNREFUSED");
      },
    });
    const healthy = stack.deps("standard");
    const esm = await stack.esm(stack.standard, (n) => (n === 0 ? crashing : healthy));
    await vi.waitFor(() => expect(esm.invocations).toHaveLength(2), ESM_WAIT).finally(() => esm.stop());
    const [first, retry] = esm.invocations.map((i) => i.result);
    expect(ids(first?.response ?? { batchItemFailures: [] })).toHaveLength(1);
    expect((await stack.call(j.callId))?.status).toBe("completed");
    expect(ids(retry?.response ?? { batchItemFailures: [] })).toEqual([]);
    // The tool ran once: the retry published the stored outcome.
    expect(stack.downstream.requests.filter((p) => p === "/ok/crash")).toHaveLength(1);
    const completed = (await stack.events()).filter((e) => e.type === "tool_call.completed");
    expect(completed.map((e) => e.eventId)).toEqual([(await stack.call(j.callId))?.statusEvent.eventId]);
  });

  it("a job that stored its outcome at its last receive but could not publish it leaves for the DLQ, and its redrive publishes exactly that outcome without running the tool", async () => {
    // maxReceiveCount 1: the first receive is the last (§2.3). The outcome is stored, then the stream is
    // unreachable: SQS moves the job to the DLQ with its outcome stored and unpublished; only a redrive
    // (the operator's, a new message, §4) can publish it.
    await stack.reset(1, ESM_VISIBILITY_SECONDS);
    const j = job("http.request", ok("last-receive"));
    await stack.send(stack.standard, [body(j)]);
    const limit = { deadLetterAfter: { maxReceiveCount: 1, queue: stack.standard.dlqUrl } };
    const crashing = stack.deps("standard", {
      ...limit,
      publish: async (events) => {
        if (events.some((e) => e.type === "tool_call.completed")) throw new Error("connect ECONNREFUSED");
      },
    });
    const healthy = stack.deps("standard", limit);
    const esm = await stack.esm(stack.standard, (n) => (n === 0 ? crashing : healthy));
    try {
      const [dead] = await deadLettered(stack.standard.dlqUrl, 1);
      const stored = await stack.call(j.callId);
      // The dead-lettered mark never outranks the stored outcome.
      expect(stored?.status).toBe("completed");
      expect((await stack.events()).filter((e) => e.type === "tool_call.completed")).toEqual([]);

      await stack.send(stack.standard, [{ body: dead?.body ?? "" }]);
      await vi.waitFor(() => expect(esm.invocations).toHaveLength(2), ESM_WAIT);
      expect(esm.invocations[1]?.result.response.batchItemFailures).toEqual([]);
      expect(stack.downstream.requests.filter((p) => p === "/ok/last-receive")).toHaveLength(1);
      const published = (await stack.events()).filter(
        (e) => e.type === "tool_call.completed" || e.type === "tool_call.failed",
      );
      expect(published.map((e) => [e.type, e.eventId])).toEqual([
        ["tool_call.completed", stored?.statusEvent.eventId],
      ]);
    } finally {
      await esm.stop();
    }
  });

  it("reports jobs it did not start when the invocation's remaining time runs low", async () => {
    // The invocation's remaining time is scripted, not waited for: 10 s until two runs have started,
    // then 0.5 s, below the 1 s margin. The two runs wait for each other, so no third job can start
    // before the time drops.
    let started = 0;
    let bothStarted: () => void = () => undefined;
    const barrier = new Promise<void>((r) => {
      bothStarted = r;
    });
    const registry = new ToolRegistry(
      [
        defineTool({
          name: "test.paired",
          description: "Returns once two runs have started.",
          inputSchema: { type: "object" },
          timeoutMs: 10_000,
          concurrency: 10,
          run: async () => {
            started += 1;
            if (started === 2) bothStarted();
            await barrier;
            return { started };
          },
        }),
      ],
      compileWithAjv(),
    );
    const jobs = Array.from({ length: 6 }, () => job("test.paired", {}));
    await stack.send(stack.standard, jobs.map(body));
    const records = await stack.receive(stack.standard);
    const context = lambdaContext({ remainingMs: () => (started >= 2 ? 500 : 10_000) });
    const { response, summary } = await processToolCallJobs(
      records,
      context,
      stack.deps("standard", { concurrency: 2, registry }),
    );
    expect(summary).toMatchObject({ deadlineReached: true, succeeded: 2, notStarted: 4, retried: 4 });
    expect(ids(response)).toHaveLength(4);
    expect(started).toBe(2);
  });
});

describe("a tool's time budget counts the wait for its concurrency slot (issue 10, defect 4)", () => {
  it("a job queued behind a slow run gets only what is left of the invocation, not the whole budget", async () => {
    // One slot; a run waits until it is let go or its signal aborts. The clock is the worker's and the
    // context's, moved by the test: nothing waits for time to pass.
    const start = 1_000_000;
    let clock = start;
    const holders: (() => void)[] = [];
    let firstHolds: () => void = () => undefined;
    const holding = new Promise<void>((r) => {
      firstHolds = r;
    });
    const registry = new ToolRegistry(
      [
        defineTool({
          name: "test.single",
          description: "One run at a time; returns when let go.",
          inputSchema: { type: "object" },
          timeoutMs: 5_000,
          concurrency: 1,
          run: (_args, { signal }) =>
            new Promise((resolve, reject) => {
              holders.push(() => resolve({ ok: true }));
              firstHolds();
              signal.addEventListener("abort", () => reject(signal.reason));
            }),
        }),
      ],
      compileWithAjv(),
    );
    const [a, b] = [job("test.single", {}), job("test.single", {})];
    await stack.send(stack.standard, [body(a), body(b)]);
    const records = await stack.receive(stack.standard);
    expect(records).toHaveLength(2);
    const context = lambdaContext({ remainingMs: () => 60_000 - (clock - start) });
    const run = processToolCallJobs(
      records,
      context,
      stack.deps("standard", { registry, concurrency: 2, now: () => clock }),
    );
    await holding;
    // Wait (on the registry's state, not on a timer) until the second job is queued for the slot.
    while (registry.load("test.single")?.waiting !== 1) await new Promise((r) => setImmediate(r));
    // 58.95 s pass while the first run holds the slot: 1.05 s of the invocation is left, 50 ms above
    // the 1 s margin.
    clock += 58_950;
    holders.shift()?.();
    const { summary } = await run;
    expect(summary).toMatchObject({ succeeded: 1, retried: 1 });
    const failed = (await stack.events()).filter((e) => e.type === "tool_call.failed");
    expect(failed).toHaveLength(1);
    // Before the fix the queued run got its whole 5 s timeout (the 59 s budget was taken before the
    // wait), outliving the invocation's last 1.05 s.
    expect(failed[0]).toMatchObject({
      error: { code: "tool-timeout", message: expect.stringContaining("within 50 ms"), retryable: true },
    });
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

describe("fifo-worker on a FIFO queue (docs/aws-semantics.md §3)", () => {
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
    const esm = await stack.esm(stack.fifo, () => deps);
    // The group is not stuck: its next message comes and runs.
    await vi
      .waitFor(async () => expect((await stack.call(after.callId))?.status).toBe("completed"), ESM_WAIT)
      .finally(() => esm.stop());
    const summaries = esm.invocations.map((i) => i.result.summary);
    expect(summaries.reduce((n, s) => n + s.deadLettered, 0)).toBe(1);
    expect(summaries.reduce((n, s) => n + s.succeeded, 0)).toBe(1);
    expect(esm.invocations.flatMap((i) => ids(i.result.response))).toEqual([]);
    const [dead] = await stack.drain(stack.fifo.dlqUrl);
    expect(dead?.body).toBe("garbage");
    expect(dead?.attributes[DeadLetterAttribute.ReasonCode]).toBe("bad-json");
  });
});

function encodeWithVersion(version: string): string {
  const j = job("text.stats", { text: "x" });
  return JSON.stringify({ ...j, specVersion: version });
}
