import { type DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";
import { dynamoDbDocumentClient } from "@mcp-pipeline/aws";
import type { ToolCallLifecycleEvent, ToolCallStarted } from "@mcp-pipeline/contracts";
import {
  createTableWhenActive,
  DoorAction,
  emulatorClientOptions,
  type RunningEmulator,
  startDynamoDbEndpoint,
  startRequestDoor,
} from "@mcp-pipeline/emulators";
import { countRequests, type RequestCounter } from "@mcp-pipeline/emulators/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  type CallCache,
  type CallClaim,
  ClaimSupersededError,
  type ToolCallDeadLettered,
  ToolCallStore,
  toolCallsTableDefinition,
  WriteContentionError,
} from "../../src/index.js";

let dynamo: RunningEmulator;
let client: DynamoDBDocumentClient;
let requests: RequestCounter;
const table = "tool-calls";

const started = (callId: string, eventId: string, attempt = 1): ToolCallStarted => ({
  specVersion: "1.0",
  eventId,
  type: "tool_call.started",
  sessionId: "s-1",
  callId,
  tool: "echo",
  occurredAt: `2026-11-30T10:00:0${attempt}.000Z`,
  attempt,
});

beforeAll(async () => {
  dynamo = await startDynamoDbEndpoint();
  client = dynamoDbDocumentClient(emulatorClientOptions(dynamo));
  requests = countRequests(client);
  await createTableWhenActive(client, toolCallsTableDefinition(table));
});
afterAll(async () => {
  client.destroy();
  await dynamo.stop();
});

describe("ToolCallStore on DynamoDB (dynalite)", () => {
  it("writes a call once per change and serves later events of the batch from the prefetched cache", async () => {
    const store = new ToolCallStore({ client, tableName: table });
    requests.reset();
    const cache = await store.prefetch(["c-1", "c-1"]);
    expect((await store.apply(started("c-1", "e1"), cache)).change).toBe("created");
    expect((await store.apply(started("c-1", "e2", 2), cache)).change).toBe("updated");
    expect((await store.apply(started("c-1", "e2", 2), cache)).change).toBe("duplicate");
    expect(requests.byCommand()).toEqual({ BatchGetItemCommand: 1, PutItemCommand: 2 });
    expect(await store.get("c-1")).toMatchObject({ attempts: 2, version: 2 });
  });

  it("re-reads and folds again when another writer changed the call since it was read", async () => {
    const store = new ToolCallStore({ client, tableName: table });
    const cache = await store.prefetch(["c-2"]);
    await store.apply(started("c-2", "e1"), new Map()); // a concurrent writer the cache does not know about
    const applied = await store.apply(started("c-2", "e2", 2), cache);
    expect(applied.change).toBe("updated");
    expect(await store.get("c-2")).toMatchObject({ attempts: 2, version: 2, recentEventIds: ["e1", "e2"] });
  });

  it("gives up with a transient error when it keeps losing the race", async () => {
    const store = new ToolCallStore({ client, tableName: table, maxWriteAttempts: 2 });
    await store.apply(started("c-3", "e1"), new Map());
    // A cache that is always stale: every conditional write fails.
    const stale = await store.prefetch(["c-3"]);
    const staleState = stale.get("c-3");
    const alwaysStale = new Map(stale);
    alwaysStale.delete = () => true;
    await client.send(new PutCommand({ TableName: table, Item: { ...staleState, version: 99 } }));
    const write = store.apply(started("c-3", "e9", 3), alwaysStale);
    await expect(write).rejects.toBeInstanceOf(WriteContentionError);
    await expect(write).rejects.toMatchObject({ kind: "transient" });
  });

  it("applyEvents: a call's events of one batch in one conditional write, and none for a redelivery", async () => {
    const store = new ToolCallStore({ client, tableName: table });
    const run = [
      started("c-4", "e1"),
      started("c-4", "e2", 2),
      started("c-4", "e1"),
      started("c-4", "e3", 3),
    ];
    requests.reset();
    const folded = await store.applyEvents(run, await store.prefetch(["c-4"]));
    expect(folded.changes).toEqual(["created", "updated", "duplicate", "updated"]);
    expect(requests.byCommand()).toEqual({ BatchGetItemCommand: 1, PutItemCommand: 1 });
    expect(await store.get("c-4")).toMatchObject({
      attempts: 3,
      version: 3,
      recentEventIds: ["e1", "e2", "e3"],
    });

    requests.reset();
    const again = await store.applyEvents(run, await store.prefetch(["c-4"]));
    expect(again.changed).toBe(false);
    expect(requests.byCommand()).toEqual({ BatchGetItemCommand: 1 });
  });

  it("applyEvents: re-reads with GetItem and folds again when another writer changed the call since it was read", async () => {
    const store = new ToolCallStore({ client, tableName: table });
    const cache = await store.prefetch(["c-5"]); // known absent
    await store.apply(started("c-5", "w1"), new Map()); // a concurrent writer (the worker) creates it
    requests.reset();
    const folded = await store.applyEvents([started("c-5", "e2", 2), started("c-5", "e3", 3)], cache);
    expect(folded.changes).toEqual(["updated", "updated"]);
    // The failed create, then a read (never the failed write's answer: dynalite omits the item), then the write.
    expect(requests.byCommand()).toEqual({ GetItemCommand: 1, PutItemCommand: 2 });
    expect(await store.get("c-5")).toMatchObject({
      attempts: 3,
      version: 3,
      recentEventIds: ["w1", "e2", "e3"],
    });
  });

  it("applyEvents refuses events of two calls and gives up with a transient error when it keeps losing", async () => {
    const store = new ToolCallStore({ client, tableName: table, maxWriteAttempts: 1 });
    await expect(store.applyEvents([started("c-6", "e1"), started("c-7", "e2")])).rejects.toThrow(RangeError);
    await store.apply(started("c-6", "e1"), new Map());
    const stale = new Map([["c-6", null]]);
    const write = store.applyEvents([started("c-6", "e2", 2)], stale);
    await expect(write).rejects.toBeInstanceOf(WriteContentionError);
    await expect(write).rejects.toMatchObject({ kind: "transient", callId: "c-6" });
  });
});

const outcome = {
  completed: (callId: string, at: string): ToolCallLifecycleEvent => ({
    specVersion: "1.0",
    eventId: `completed-${callId}`,
    type: "tool_call.completed",
    sessionId: "s-1",
    callId,
    tool: "echo",
    occurredAt: at,
    durationMs: 5,
    result: { sizeBytes: 2, summary: "{}", location: { kind: "inline" } },
  }),
  failed: (callId: string, at: string): ToolCallLifecycleEvent => ({
    specVersion: "1.0",
    eventId: `failed-${callId}`,
    type: "tool_call.failed",
    sessionId: "s-1",
    callId,
    tool: "echo",
    occurredAt: at,
    durationMs: 5,
    error: { code: "downstream-4xx", message: "refused", retryable: false },
  }),
  deadLettered: (callId: string, at: string): ToolCallDeadLettered => ({
    type: "tool_call.dead_lettered",
    eventId: `dead-lettered-${callId}`,
    sessionId: "s-1",
    callId,
    tool: "echo",
    occurredAt: at,
    attempt: 5,
    deadLetterQueue: "jobs-dlq",
    error: { code: "tool-timeout", message: "slow" },
  }),
};

const claimOf = (token: string, leaseExpiresAt = Date.now() + 60_000): CallClaim => ({
  token,
  leaseExpiresAt,
});
const held = (token: string) => ({ kind: "held", token }) as const;

describe("fencing a call's outcome by the claim that took it (issue 24, defect 5; docs/idempotency.md)", () => {
  it("an outcome written under a claim that another claim has taken over is refused, and the current claim's outcome stands", async () => {
    const store = new ToolCallStore({ client, tableName: table });
    expect(await store.claimCall(started("f-1", "s-a", 1), claimOf("a"))).toMatchObject({
      status: "claimed",
      state: { status: "started", claim: { token: "a" } },
    });
    // The lease of claim a ran out; the job was claimed again by b.
    await store.claimCall(started("f-1", "s-b", 2), claimOf("b"));
    // a's failure happened first, so the join alone would let it decide the call (the first outcome wins).
    const late = store.apply(
      outcome.failed("f-1", "2026-11-30T10:00:05.000Z"),
      new Map(),
      undefined,
      {},
      held("a"),
    );
    await expect(late).rejects.toBeInstanceOf(ClaimSupersededError);
    await expect(late).rejects.toMatchObject({
      kind: "transient",
      callId: "f-1",
      token: "a",
      holder: { token: "b" },
    });
    await store.apply(outcome.completed("f-1", "2026-11-30T10:00:09.000Z"), new Map(), "{}", {}, held("b"));
    expect(await store.get("f-1")).toMatchObject({
      status: "completed",
      output: "{}",
      claim: { token: "b" },
    });
  });

  it("a write of an old claim that DynamoDB applies after a newer claim took the call fails its condition and changes nothing", async () => {
    let holdNext = false;
    const door = await startRequestDoor(dynamo.endpoint, (target) => {
      if (!holdNext || target !== "DynamoDB_20120810.PutItem") return DoorAction.Pass;
      holdNext = false;
      return DoorAction.HoldUntilReleased;
    });
    const slowClient = dynamoDbDocumentClient(
      emulatorClientOptions({ endpoint: door.endpoint, stop: async () => {} }),
    );
    try {
      const a = new ToolCallStore({ client: slowClient, tableName: table });
      const b = new ToolCallStore({ client, tableName: table });
      const cacheA: CallCache = new Map();
      await a.claimCall(started("f-2", "s-a", 1), claimOf("a"), cacheA);
      // a's outcome is sent and held on its way: it reaches DynamoDB only once released.
      holdNext = true;
      const writeA = a.apply(
        outcome.failed("f-2", "2026-11-30T10:00:05.000Z"),
        cacheA,
        undefined,
        {},
        held("a"),
      );
      writeA.catch(() => undefined);
      await vi.waitFor(() => expect(door.stats.held).toBe(1), { timeout: 60_000, interval: 20 });
      // Meanwhile b claims the call and stores its outcome.
      await b.claimCall(started("f-2", "s-b", 2), claimOf("b"));
      await b.apply(outcome.completed("f-2", "2026-11-30T10:00:09.000Z"), new Map(), "{}", {}, held("b"));
      const decided = await b.get("f-2");

      // DynamoDB applies a's write now: its condition (the version a read, under claim a) no longer holds.
      expect(await door.releaseHeld()).toEqual([
        { status: 400, type: expect.stringMatching(/ConditionalCheckFailedException$/) },
      ]);
      // a reads the call again, finds claim b on it, and gives up without writing.
      await expect(writeA).rejects.toBeInstanceOf(ClaimSupersededError);
      expect(await b.get("f-2")).toEqual(decided);
      expect(decided).toMatchObject({ status: "completed", claim: { token: "b" } });
    } finally {
      slowClient.destroy();
      await door.stop();
    }
  });

  it("a second claim over a start the call already has is registered with the version raised, so that the first claim's outcome is fenced", async () => {
    const store = new ToolCallStore({ client, tableName: table });
    // Two deliveries at the same receive count (a producer's second send): the same `started` event id.
    await store.claimCall(started("f-5", "s-1", 1), claimOf("a"));
    const first = await store.get("f-5");
    await store.claimCall(started("f-5", "s-1", 1), claimOf("b"));
    const second = await store.get("f-5");
    expect(second?.recentEventIds).toEqual(first?.recentEventIds);
    expect(second).toMatchObject({ version: (first?.version ?? 0) + 1, claim: { token: "b" } });
    await expect(
      store.apply(outcome.completed("f-5", "2026-11-30T10:00:09.000Z"), new Map(), "{}", {}, held("a")),
    ).rejects.toBeInstanceOf(ClaimSupersededError);
  });

  it("claimCall returns a call that already has its outcome as decided, writing nothing, whatever the cache said", async () => {
    const store = new ToolCallStore({ client, tableName: table });
    const preRead = await store.prefetch(["f-3"]); // "no such call yet", read before the claim
    await store.claimCall(started("f-3", "s-a", 1), claimOf("a"));
    await store.apply(outcome.completed("f-3", "2026-11-30T10:00:09.000Z"), new Map(), "{}", {}, held("a"));
    const stored = await store.get("f-3");
    requests.reset();
    const taken = await store.claimCall(started("f-3", "s-b", 2), claimOf("b"), preRead);
    expect(taken).toEqual({ status: "decided", state: stored });
    expect(requests.byCommand()).toEqual({ GetItemCommand: 1 });
  });

  it("a dead-lettered mark is refused while another invocation's claim is live, and written once that lease has ended", async () => {
    const store = new ToolCallStore({ client, tableName: table });
    const leaseEnds = Date.now() + 60_000;
    await store.claimCall(started("f-4", "s-b", 1), claimOf("b", leaseEnds));
    const mark = outcome.deadLettered("f-4", "2026-11-30T10:00:07.000Z");
    const whileLive = { kind: "not-held-by-another", token: undefined, now: leaseEnds - 1 } as const;
    await expect(store.apply(mark, new Map(), undefined, {}, whileLive)).rejects.toBeInstanceOf(
      ClaimSupersededError,
    );
    expect(await store.get("f-4")).toMatchObject({ status: "started" });
    // The mark of the invocation that holds the claim is its own; after the lease, anyone's is.
    const ownMark = { kind: "not-held-by-another", token: "b", now: leaseEnds - 1 } as const;
    expect((await store.apply(mark, new Map(), undefined, {}, ownMark)).change).toBe("updated");
    const afterLease = await store.apply(
      outcome.deadLettered("f-4", "2026-11-30T10:00:08.000Z"),
      new Map(),
      undefined,
      {},
      {
        kind: "not-held-by-another",
        token: undefined,
        now: leaseEnds,
      },
    );
    expect(afterLease.state).toMatchObject({ status: "dead-lettered" });
  });
});
