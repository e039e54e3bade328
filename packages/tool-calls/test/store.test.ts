import { type DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";
import { dynamoDbDocumentClient } from "@mcp-pipeline/aws";
import type { ToolCallLifecycleEvent } from "@mcp-pipeline/contracts";
import { countRequests, type RequestCounter } from "@mcp-pipeline/testing";
import {
  createTableWhenActive,
  emulatorClientOptions,
  type RunningEmulator,
  startDynamoDbEndpoint,
} from "@mcp-pipeline/testing/emulators";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolCallStore, toolCallsTableDefinition, WriteContentionError } from "../src/index.js";

let dynamo: RunningEmulator;
let client: DynamoDBDocumentClient;
let requests: RequestCounter;
const table = "tool-calls";

const started = (callId: string, eventId: string, attempt = 1): ToolCallLifecycleEvent => ({
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
