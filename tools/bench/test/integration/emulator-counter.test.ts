import { DynamoDBClient, GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import {
  createTableWhenActive,
  emulatorClientOptions,
  type RunningEmulator,
  startDynamoDb,
} from "@mcp-pipeline/emulators";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countAtEmulator, type EmulatorCounter } from "../../src/lib/emulator-counter.ts";

describe("countAtEmulator", () => {
  let dynamo: RunningEmulator;
  let counting: EmulatorCounter;
  let client: DynamoDBClient;

  beforeAll(async () => {
    dynamo = await startDynamoDb();
    counting = await countAtEmulator(dynamo.endpoint);
    client = new DynamoDBClient(emulatorClientOptions(counting.proxy));
  });

  afterAll(async () => {
    client.destroy();
    await counting.proxy.stop();
    await dynamo.stop();
  });

  it("counts by operation every request that reaches the emulator through it, and passes the answers back", async () => {
    await createTableWhenActive(client, {
      TableName: "counted",
      AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" }],
      KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
    });
    counting.counter.reset();
    await client.send(new PutItemCommand({ TableName: "counted", Item: { id: { S: "a" } } }));
    await client.send(new PutItemCommand({ TableName: "counted", Item: { id: { S: "b" } } }));
    const read = await client.send(new GetItemCommand({ TableName: "counted", Key: { id: { S: "a" } } }));
    expect(read.Item).toEqual({ id: { S: "a" } });
    expect(counting.counter.byCommand()).toEqual({ GetItem: 1, PutItem: 2 });
    expect(counting.counter.total()).toBe(3);
    counting.counter.reset();
    expect(counting.counter.total()).toBe(0);
  });
});
