import { PermanentError } from "@mcp-pipeline/contracts";
import { DoorAction, startFaultProxy, startRequestDoor } from "@mcp-pipeline/emulators";
import { lambdaContext } from "@mcp-pipeline/emulators/testing";
import { IdempotencyStore } from "@mcp-pipeline/tool-calls/idempotency";
import { defineTool, ToolRegistry, toolRunIdempotencyKey } from "@mcp-pipeline/tools/registry";
import { compileWithAjv } from "@mcp-pipeline/tools/registry/ajv";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { processToolCallJobs, type WorkerDeps } from "../../src/index.js";
import { body, ESM_VISIBILITY_SECONDS, job, WorkerStack } from "../stack.js";

let stack: WorkerStack;
beforeAll(async () => {
  stack = await WorkerStack.start();
});
afterAll(async () => {
  await stack?.stop();
});
beforeEach(async () => {
  await stack.reset();
});

const ids = (response: { batchItemFailures: readonly { itemIdentifier: unknown }[] }) =>
  response.batchItemFailures.map((f) => f.itemIdentifier);

/**
 * A tool whose every run returns something different (its run number) and large enough to go to S3
 * (the stack keeps results up to 4 KiB inline), so a result written by another run is visible.
 */
function countingRegistry(): { registry: ToolRegistry; runs: () => number } {
  let runs = 0;
  const registry = oneTool("test.counted", "Returns its run number and 5 KB of padding.", async () => {
    runs += 1;
    return { run: runs, padding: "x".repeat(5_000) };
  });
  return { registry, runs: () => runs };
}

/** A registry of one test tool that takes any arguments. */
function oneTool(name: string, description: string, run: () => Promise<unknown>): ToolRegistry {
  const tool = defineTool({
    name,
    description,
    inputSchema: { type: "object" },
    timeoutMs: 60_000,
    concurrency: 4,
    run,
  });
  return new ToolRegistry([tool], compileWithAjv());
}

/** Fails every request of one DynamoDB operation, as an unavailable partition would. */
const failing = (operation: string) => (target: string) =>
  target === `DynamoDB_20120810.${operation}`
    ? { status: 500, type: "InternalServerError", message: `injected: ${operation} unavailable` }
    : undefined;

async function completedEvents(callId: string) {
  return (await stack.events()).filter((e) => e.callId === callId && e.type === "tool_call.completed");
}

describe("worker recovery does not depend on the optional BatchGetItem pre-read (issue 10, defect 2)", () => {
  it("attempt 1 stored the result but could not publish it; attempt 2's pre-read fails: the tool does not run again and the stored result stays", async () => {
    // The event source mapping retries: the reported message comes back after the visibility timeout.
    await stack.reset(3, ESM_VISIBILITY_SECONDS);
    const { registry, runs } = countingRegistry();
    const j = job("test.counted", {});
    await stack.send(stack.standard, [body(j)]);

    // Attempt 1: runs the tool, stores the result (S3 + table), then the stream refuses `completed`.
    const base = stack.deps("standard", { registry });
    const attempt1Deps: WorkerDeps = {
      ...base,
      publish: async (events) => {
        if (events.some((e) => e.type === "tool_call.completed")) throw new Error("connect ECONNREFUSED");
        await base.publish(events);
      },
    };
    // Attempt 2: the pre-read (BatchGetItem) fails; everything else reaches the real emulators.
    const proxy = await startFaultProxy(stack.endpoints[0] ?? "", failing("BatchGetItem"));
    const { stores, client } = stack.storesVia(proxy.endpoint, "standard");
    const esm = await stack.esm(stack.standard, (n) => (n === 0 ? attempt1Deps : { ...base, ...stores }));
    try {
      await vi.waitFor(() => expect(esm.invocations).toHaveLength(2), { timeout: 120_000, interval: 100 });
    } finally {
      await esm.stop();
      client.destroy();
      await proxy.stop();
    }
    const [attempt1, attempt2] = esm.invocations;
    expect(ids(attempt1?.result.response ?? { batchItemFailures: [] })).toEqual([
      attempt1?.records[0]?.messageId,
    ]);
    expect(attempt2?.records).toHaveLength(1);
    expect(proxy.injected()).toBeGreaterThan(0);
    expect(ids(attempt2?.result.response ?? { batchItemFailures: [] })).toEqual([]);
    expect(attempt2?.result.summary).toMatchObject({ duplicates: 1, succeeded: 0 });

    const stored = await stack.call(j.callId);
    expect(stored?.status).toBe("completed");
    if (stored?.result?.location.kind !== "s3") throw new Error("expected the result in S3");
    const storedKey = stored.result.location.key;
    const storedBytes = await stack.object(storedKey);
    expect(JSON.parse(storedBytes).run).toBe(1);

    expect(runs()).toBe(1);
    // One object, the one the table points to, with attempt 1's bytes.
    expect(await stack.resultKeys(j.callId)).toEqual([storedKey]);
    expect(await stack.object(storedKey)).toBe(storedBytes);
    expect(await stack.call(j.callId)).toEqual(stored);
    // The published outcome is the stored one.
    const published = await completedEvents(j.callId);
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({
      eventId: stored.statusEvent.eventId,
      result: { location: stored.result.location, sizeBytes: Buffer.byteLength(storedBytes) },
    });
  });

  it("two runs of one call (a lease that ran out under a slow run): the result the table points to is never overwritten by the later run", async () => {
    const { registry } = countingRegistry();
    const j = job("test.counted", {});
    await stack.send(stack.standard, [body(j)]);
    const [a] = await stack.receive(stack.standard);
    await stack.send(stack.standard, [body(j)]);
    const [b] = await stack.receive(stack.standard);
    if (!a || !b) throw new Error("expected two deliveries");

    // A runs the tool, then stalls before storing its result until B is done.
    const base = stack.deps("standard", { registry });
    let reached: () => void = () => undefined;
    const aStalled = new Promise<void>((r) => {
      reached = r;
    });
    let resume: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      resume = r;
    });
    const runA = processToolCallJobs([a], lambdaContext(), {
      ...base,
      placeResult: async (callId, json) => {
        reached();
        await gate;
        return base.placeResult(callId, json);
      },
    });
    await aStalled;

    // B's clock is past A's lease (A's invocation would have ended): B claims and runs the call.
    const later: WorkerDeps["idempotency"] = new IdempotencyStore({
      client: stack.dynamo,
      tableName: stack.names.dedupe,
      scope: "standard-worker",
      retentionSeconds: 86_400,
      now: () => Date.now() + 3_600_000,
    });
    const runB = await processToolCallJobs([b], lambdaContext(), { ...base, idempotency: later });
    expect(runB.summary.succeeded).toBe(1);
    const decided = await stack.call(j.callId);
    if (decided?.result?.location.kind !== "s3") throw new Error("expected the result in S3");
    const key = decided.result.location.key;
    const bytes = await stack.object(key);
    expect(JSON.parse(bytes).run).toBe(2);

    resume();
    await runA;

    // A stored its own object beside B's; the table still describes B's run, and its pointer B's bytes.
    expect(await stack.call(j.callId)).toMatchObject({
      result: decided.result,
      statusEvent: decided.statusEvent,
    });
    expect(await stack.object(key)).toBe(bytes);
    expect(await stack.resultKeys(j.callId)).toHaveLength(2);
    expect(decided.result.sizeBytes).toBe(Buffer.byteLength(bytes));
    // Whatever each run published, it is the table's outcome.
    const published = await completedEvents(j.callId);
    expect(new Set(published.map((e) => e.eventId))).toEqual(new Set([decided.statusEvent.eventId]));
  });
});

/** A promise and the function that settles it: the order of two invocations, set by the test. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe("a tool runs once per job across duplicate deliveries (issue 24, defect 1)", () => {
  it("a duplicate delivery whose pre-read saw no outcome does not run the tool again once another invocation stored the outcome and released its claim", async () => {
    // The real http.request tool against the stack's downstream, which counts every request it gets.
    const j = job("http.request", { path: `/ok/once-${Date.now()}` });
    await stack.send(stack.standard, [body(j)]);
    const [a] = await stack.receive(stack.standard);
    await stack.send(stack.standard, [body(j)]);
    const [b] = await stack.receive(stack.standard);
    if (!a || !b) throw new Error("expected two deliveries of the job");
    const runs = () => stack.downstream.requests.filter((path) => path === j.arguments.path).length;

    // B pre-reads its batch (no outcome yet, no completed key), then waits before it claims.
    const base = stack.deps("standard");
    const store = base.idempotency;
    const bPreRead = gate();
    const bMayClaim = gate();
    const invocationB = processToolCallJobs([b], lambdaContext(), {
      ...base,
      idempotency: {
        completedAmong: (keys, options) => store.completedAmong(keys, options),
        claim: async (key, leaseMs, options) => {
          bPreRead.open();
          await bMayClaim.opened;
          return store.claim(key, leaseMs, options);
        },
        complete: (claim, options) => store.complete(claim, options),
        release: (claim, options) => store.release(claim, options),
      },
    });
    await bPreRead.opened;

    // A claims, runs the tool, stores the completed call, then the stream refuses `completed`: A releases
    // its claim and reports the job for retry.
    const invocationA = await processToolCallJobs([a], lambdaContext(), {
      ...base,
      publish: async (events, options) => {
        if (events.some((e) => e.type === "tool_call.completed"))
          throw new Error("injected: stream unavailable");
        await base.publish(events, options);
      },
    });
    expect(ids(invocationA.response)).toEqual([a.messageId]);
    expect(runs()).toBe(1);
    expect(await stack.call(j.callId)).toMatchObject({ status: "completed" });

    // B claims the released key: what its pre-read said ("no outcome yet") is no longer true.
    bMayClaim.open();
    const resultB = await invocationB;
    expect(runs()).toBe(1);
    expect(ids(resultB.response)).toEqual([]);
    expect(resultB.summary).toMatchObject({ succeeded: 0, duplicates: 1 });
    // B published the stored outcome, the one A could not.
    const stored = await stack.call(j.callId);
    const published = await completedEvents(j.callId);
    expect(published.map((e) => e.eventId)).toEqual([stored?.statusEvent.eventId]);
  });
});

/** An idempotency store of the stack's dedupe table whose clock is `aheadMs` ahead: a later invocation. */
function laterStore(aheadMs: number): WorkerDeps["idempotency"] {
  return new IdempotencyStore({
    client: stack.dynamo,
    tableName: stack.names.dedupe,
    scope: "standard-worker",
    retentionSeconds: 86_400,
    now: () => Date.now() + aheadMs,
  });
}

/** Two deliveries (two messages) of one job, received. */
async function twoDeliveries(j: ReturnType<typeof job>) {
  await stack.send(stack.standard, [body(j)]);
  const [a] = await stack.receive(stack.standard);
  await stack.send(stack.standard, [body(j)]);
  const [b] = await stack.receive(stack.standard);
  if (!a || !b) throw new Error("expected two deliveries of the job");
  return { a, b };
}

describe("a call's outcome is fenced by the claim that took it (issue 24, defect 5)", () => {
  it("a permanent failure of a run whose claim was taken over, applied by DynamoDB after the later run's outcome, never replaces it", async () => {
    // Run 1 fails for good, run 2 succeeds: the first outcome to happen is run 1's, so the join alone
    // (the first terminal outcome wins) would let run 1's late write decide the call.
    let runs = 0;
    let holdNextWrite = false;
    const registry = oneTool("test.flaky", "Fails for good on its first run, succeeds after.", async () => {
      runs += 1;
      if (runs > 1) return { run: runs };
      holdNextWrite = true;
      throw new PermanentError("downstream-4xx", "refused on the first run");
    });
    const j = job("test.flaky", {});
    const { a, b } = await twoDeliveries(j);

    // A's writes to the tool-calls table cross a door that holds the one after its run: the failure.
    const door = await startRequestDoor(stack.endpoints[0] ?? "", (target, text) => {
      if (!holdNextWrite || target !== "DynamoDB_20120810.PutItem" || !text.includes(stack.names.toolCalls))
        return DoorAction.Pass;
      holdNextWrite = false;
      return DoorAction.HoldUntilReleased;
    });
    const { stores, client } = stack.storesVia(door.endpoint, "standard");
    const base = stack.deps("standard", { registry });
    try {
      const invocationA = processToolCallJobs([a], lambdaContext(), { ...base, ...stores });
      await vi.waitFor(() => expect(door.stats.held).toBe(1), { timeout: 60_000, interval: 20 });

      // A's lease has run out by B's clock: B claims the job, runs it and stores its outcome.
      const invocationB = await processToolCallJobs([b], lambdaContext(), {
        ...base,
        idempotency: laterStore(3_600_000),
      });
      expect(invocationB.summary).toMatchObject({ succeeded: 1 });
      const decided = await stack.call(j.callId);
      expect(decided).toMatchObject({ status: "completed" });

      // DynamoDB applies A's failure now, and refuses it: the item is no longer the one A read.
      expect(await door.releaseHeld()).toEqual([
        { status: 400, type: expect.stringMatching(/ConditionalCheckFailedException$/) },
      ]);
      const resultA = await invocationA;
      // The call is still B's: A's failure did not replace B's outcome.
      expect(await stack.call(j.callId)).toEqual(decided);
      expect(ids(resultA.response)).toEqual([a.messageId]);
      expect(resultA.summary).toMatchObject({ failedPermanently: 0, retried: 1 });
      expect(resultA.outcome.outcomes[0]).toMatchObject({
        status: "failed",
        error: { name: "ClaimSupersededError" },
      });
    } finally {
      client.destroy();
      await door.stop();
    }
    // Nothing of A's run reached the stream as an outcome.
    const outcomes = (await stack.events()).filter(
      (e) => e.callId === j.callId && e.type !== "tool_call.started",
    );
    expect(outcomes.map((e) => e.type)).toEqual(["tool_call.completed"]);
  });

  it("a job leaving for the DLQ at its last receive does not mark dead-lettered a call that another invocation is running", async () => {
    const ran = gate();
    const finish = gate();
    const registry = oneTool("test.slow", "Waits until the test lets it finish.", async () => {
      ran.open();
      await finish.opened;
      return { done: true };
    });
    const j = job("test.slow", {});
    const { a, b } = await twoDeliveries(j);
    const base = stack.deps("standard", {
      registry,
      deadLetterAfter: { maxReceiveCount: 3, queue: stack.standard.dlqUrl },
    });

    // B takes the call and runs the tool.
    const invocationB = processToolCallJobs([b], lambdaContext(), base);
    await ran.opened;
    expect(await stack.call(j.callId)).toMatchObject({ status: "started" });

    // A holds another message of the job at its last receive: the claim is B's, so A's job fails
    // (AlreadyInProgressError) and, at maxReceiveCount, leaves for the DLQ.
    const lastReceive = { ...a, attributes: { ...a.attributes, ApproximateReceiveCount: "3" } };
    const resultA = await processToolCallJobs([lastReceive], lambdaContext(), base);
    expect(ids(resultA.response)).toEqual([a.messageId]);
    expect(resultA.summary.leavingForDlq).toBe(0);
    expect(await stack.call(j.callId)).toMatchObject({ status: "started" });

    finish.open();
    expect((await invocationB).summary).toMatchObject({ succeeded: 1 });
    expect(await stack.call(j.callId)).toMatchObject({ status: "completed" });
  });
});

describe("every run of a job carries the same idempotency key to the downstream (issue 24, defect 5)", () => {
  it("two runs of one http.request job (a lease that ran out under a slow run) send the same Idempotency-Key, derived from the callId", async () => {
    const j = job("http.request", { path: `/ok/keyed-${Date.now()}` });
    const { a, b } = await twoDeliveries(j);
    const base = stack.deps("standard");
    const placed = gate();
    const resume = gate();
    // A runs the tool, then stalls before storing its result, until B is done.
    const invocationA = processToolCallJobs([a], lambdaContext(), {
      ...base,
      placeResult: async (callId, json, options) => {
        placed.open();
        await resume.opened;
        return base.placeResult(callId, json, options);
      },
    });
    await placed.opened;
    const invocationB = await processToolCallJobs([b], lambdaContext(), {
      ...base,
      idempotency: laterStore(3_600_000),
    });
    expect(invocationB.summary).toMatchObject({ succeeded: 1 });
    resume.open();
    const resultA = await invocationA;
    // A's outcome is refused (B's claim took the call): the job is reported, B's outcome stands.
    expect(ids(resultA.response)).toEqual([a.messageId]);

    const keys = stack.downstream.requests.flatMap((path, i) =>
      path === j.arguments.path ? [stack.downstream.idempotencyKeys[i]] : [],
    );
    expect(keys).toEqual([toolRunIdempotencyKey(j.callId), toolRunIdempotencyKey(j.callId)]);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
