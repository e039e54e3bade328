import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  readBatchResponse,
  type SqsEsmParameters,
  SqsEventSource,
  VisibilityTimeoutError,
} from "../../src/index.js";
import {
  Emulators,
  eventually,
  heldInvocation,
  type Payload,
  RecordingFunction,
  stoppedAfterEach,
} from "../harness.js";

let emulators: Emulators;
const running = stoppedAfterEach();
beforeAll(async () => {
  emulators = await Emulators.start();
});
afterAll(() => emulators?.stop());

const defaults: SqsEsmParameters = {
  batchSize: 10,
  batchingWindowMs: 0,
  maximumConcurrency: 2,
  reportBatchItemFailures: true,
};

async function setup(
  options: {
    parameters?: Partial<SqsEsmParameters>;
    queue?: { fifo?: boolean; visibilitySeconds?: number; maxReceiveCount?: number };
    items?: (Payload & { group?: string })[];
    timeoutMs?: number;
    environment?: Record<string, string>;
  } = {},
) {
  // A batch that succeeds must not time out or reappear on a loaded machine: generous defaults. Tests
  // of redelivery pass REDELIVERY, whose messages come back after a short visibility timeout.
  const queue = await emulators.queue({ visibilitySeconds: 30, ...options.queue });
  if (options.items) await emulators.send(queue.url, options.items);
  const fn = new RecordingFunction({
    timeoutMs: options.timeoutMs ?? 20_000,
    ...(options.environment ? { environment: options.environment } : {}),
  });
  const esm = new SqsEventSource({
    sqs: emulators.sqs,
    queueUrl: queue.url,
    function: fn,
    parameters: { ...defaults, ...options.parameters },
    waitTimeSeconds: 1,
  });
  running.push(esm, fn);
  return { queue, fn, esm };
}

/**
 * For tests that wait for messages to come back: a 3 s visibility timeout, and the function's timeout no
 * longer than it, as Lambda requires (§2.1).
 */
const REDELIVERY = { visibilitySeconds: 3, timeoutMs: 3_000 } as const;

/**
 * The messages seen, each once. A standard queue delivers at least once and may deliver a message twice
 * with nothing failed (docs/aws-semantics.md §2.1), and moto's server does so to two concurrent receives:
 * a test counts messages, and checks deletion by the queue's depth, not by how often one was seen.
 */
const distinct = (seen: readonly string[]) => [...new Set(seen)];

const ids = (prefix: string, n: number, extra: Partial<Payload> = {}) =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, ...extra }));

describe("§2.1 polling, batching, visibility", () => {
  it("inHand: a batch's messages count from their receive until their invocation and deletion end", async () => {
    const held = await heldInvocation();
    const { fn, esm } = await setup({
      items: [
        { id: "h0", touch: held.started, awaitFile: held.release },
        { id: "h1", touch: held.started, awaitFile: held.release },
      ],
      parameters: { maximumConcurrency: 1 },
    });
    expect(esm.inHand).toBe(0);
    await esm.start();
    await held.hasStarted();
    // One poller (MaximumConcurrency 1): both messages are in its batch, held in the invocation.
    await eventually(() => expect(esm.inHand).toBe(2));
    await held.letGo();
    await eventually(() => expect(esm.stats.deletedMessages).toBe(2));
    await eventually(() => expect(esm.inHand).toBe(0));
    expect(distinct(fn.seen).sort()).toEqual(["h0", "h1"]);
  });

  it("§2.1 BatchSize over 10 with a batching window: one invocation gathers several receives", async () => {
    const { fn, esm } = await setup({
      items: ids("m", 25),
      parameters: { batchSize: 25, batchingWindowMs: 1_000, maximumConcurrency: 2 },
      // Visibility (30 s here) must cover the window plus the timeout, or messages come back while the batch fills.
    });
    await esm.start();
    await eventually(() => expect(distinct(fn.seen)).toHaveLength(25));
    expect(Math.max(...fn.invocations.map((i) => i.ids.length))).toBeGreaterThan(10);
  });

  it("§2.1 a function timeout above the queue's visibility timeout is refused at creation", async () => {
    const { esm } = await setup({ queue: { visibilitySeconds: 1 }, timeoutMs: 5_000 });
    await expect(esm.start()).rejects.toBeInstanceOf(VisibilityTimeoutError);
  });

  it("§2.1 long polling: a message sent after the mapping starts is delivered", async () => {
    const { queue, fn, esm } = await setup();
    await esm.start();
    // The send goes after a receive is on its way, so the message arrives during the mapping's polling.
    await eventually(() => expect(esm.stats.receiveRequests).toBeGreaterThan(0));
    await emulators.send(queue.url, [{ id: "late" }]);
    await eventually(() => expect(fn.seen).toEqual(["late"]));
  });
});

describe("§2.2 ScalingConfig.MaximumConcurrency", () => {
  it("§2.2 never more batches in flight than MaximumConcurrency", async () => {
    const { fn, esm } = await setup({
      items: ids("c", 30, { sleepMs: 100 }),
      parameters: { batchSize: 2, maximumConcurrency: 3 },
      queue: { visibilitySeconds: 30 },
    });
    await esm.start();
    await eventually(() => expect(distinct(fn.seen)).toHaveLength(30));
    expect(fn.fn.stats.maxConcurrency).toBeLessThanOrEqual(3);
    expect(fn.fn.stats.maxConcurrency).toBeGreaterThan(1);
  });
});

describe("§2.2 scaling", () => {
  it("§2.2 starts with 5 concurrent batches and adds more while messages keep coming, up to MaximumConcurrency", async () => {
    const { fn, esm } = await setup({
      items: ids("s", 60, { sleepMs: 150 }),
      parameters: { batchSize: 1, maximumConcurrency: 8 },
      queue: { visibilitySeconds: 30 },
    });
    await esm.start();
    expect(esm.pollers).toBe(5);
    await eventually(() => expect(distinct(fn.seen)).toHaveLength(60));
    expect(esm.pollers).toBe(8);
    expect(fn.fn.stats.maxConcurrency).toBeLessThanOrEqual(8);
  });
});

describe("§2.3 error handling", () => {
  it("§2.3 partial batch response: reported messages come back (receive count 2), the others are deleted", async () => {
    const { queue, fn, esm } = await setup({
      items: [{ id: "ok1" }, { id: "bad", fail: "report" }, { id: "ok2" }],
      parameters: { maximumConcurrency: 2 },
      queue: { maxReceiveCount: 2, visibilitySeconds: REDELIVERY.visibilitySeconds },
      timeoutMs: REDELIVERY.timeoutMs,
    });
    await esm.start();
    await eventually(() => expect(fn.seen.filter((id) => id === "bad")).toHaveLength(2));
    expect(distinct(fn.seen.filter((id) => id.startsWith("ok"))).sort()).toEqual(["ok1", "ok2"]);
    // Deleted, not merely seen: nothing of them is left in the queue once "bad" has gone to the DLQ.
    await eventually(async () => expect(await emulators.depth(queue.url)).toBe(0));
    expect(esm.stats.reportedMessages).toBeGreaterThanOrEqual(1);
  });

  it("§2.3 a function error returns the whole batch; after maxReceiveCount receives the queue moves it to the DLQ", async () => {
    const { queue, fn, esm } = await setup({
      items: [{ id: "good" }, { id: "poison", fail: "throw" }],
      parameters: { maximumConcurrency: 2, batchSize: 10 },
      queue: { maxReceiveCount: 2, visibilitySeconds: REDELIVERY.visibilitySeconds },
      timeoutMs: REDELIVERY.timeoutMs,
    });
    await esm.start();
    await eventually(async () => {
      const dead = (await emulators.drain(queue.dlqUrl ?? "")) as Payload[];
      expect(dead.map((d) => d.id)).toContain("poison");
    });
    expect(fn.seen.filter((id) => id === "poison")).toHaveLength(2);
    expect(esm.stats.functionErrors).toBeGreaterThanOrEqual(2);
  });

  it.each([
    '{"batchItemFailures":[{"itemIdentifier":"not-a-message-id"}]}',
    '{"batchItemFailures":[{"foo":"notvalid"}]}',
    '{"batchItemFailures":[{"itemIdentifier":""}]}',
  ])("§2.3 the invalid response %s deletes nothing: the batch comes back", async (response) => {
    const { fn, esm } = await setup({
      items: [{ id: "x" }],
      environment: { RESPONSE_OVERRIDE: response },
      queue: { maxReceiveCount: 5, visibilitySeconds: REDELIVERY.visibilitySeconds },
      timeoutMs: REDELIVERY.timeoutMs,
    });
    await esm.start();
    await eventually(() => expect(fn.seen.filter((id) => id === "x").length).toBeGreaterThanOrEqual(2));
    expect(esm.stats.invalidResponses).toBeGreaterThanOrEqual(1);
    expect(esm.stats.deletedMessages).toBe(0);
  });

  it.each(["{}", "null", '{"batchItemFailures":[]}'])(
    "§2.3 the response %s is complete success: all deleted",
    async (response) => {
      const { queue, fn, esm } = await setup({
        items: ids("s", 3),
        environment: { RESPONSE_OVERRIDE: response },
      });
      await esm.start();
      await eventually(() => expect(esm.stats.deletedMessages).toBe(3));
      // Deleted messages cannot come back: an empty queue (nothing in flight) proves no redelivery,
      // without waiting for a visibility timeout to pass.
      await eventually(async () => expect(await emulators.depth(queue.url)).toBe(0));
      expect(distinct(fn.seen)).toHaveLength(3);
    },
  );
});

// §3 FIFO runs against moto's server in sqs-fifo-conformance.test.ts: fauxqs returns one message per group
// per receive, so batches holding several messages of one group (as SQS returns them) never occur here.

describe("§2.3 / §1.4 reading a partial batch response", () => {
  const batch = new Set(["a", "b"]);
  it.each([
    ['""', "success"],
    ["null", "success"],
    ["{}", "success"],
    ["[]", "success"],
    ['{"batchItemFailures":null}', "success"],
    ['{"batchItemFailures":[]}', "success"],
    ['{"batchItemFailures":[{"itemIdentifier":"b"}]}', "partial"],
    ['{"batchItemFailures":[{"itemIdentifier":""}]}', "invalid"],
    ['{"batchItemFailures":[{"itemIdentifier":null}]}', "invalid"],
    ['{"batchItemFailures":[{"foo":1}]}', "invalid"],
    ['{"batchItemFailures":[{"itemIdentifier":"z"}]}', "invalid"],
    ['{"batchItemFailures":[{"itemIdentifier":1}]}', "invalid"],
    ['{"batchItemFailures":"b"}', "invalid"],
    ["not json", "invalid"],
  ])("%s is %s", (payload, kind) => {
    expect(readBatchResponse(payload, batch).kind).toBe(kind);
  });
});
