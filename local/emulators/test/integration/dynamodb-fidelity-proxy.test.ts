import {
  ConditionalCheckFailedException,
  CreateTableCommand,
  DeleteItemCommand,
  DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DynamoDbFidelityProxy,
  emulatorClientOptions,
  type RunningEmulator,
  startDynamoDb,
  startDynamoDbFidelityProxy,
} from "../../src/index.js";

let dynalite: RunningEmulator;
let proxy: DynamoDbFidelityProxy;
let client: DynamoDBClient;
let direct: DynamoDBClient;
const table = "fidelity";
const stored = { pk: { S: "k-1" }, status: { S: "COMPLETED" }, n: { N: "42" }, tags: { SS: ["a", "b"] } };

beforeAll(async () => {
  dynalite = await startDynamoDb();
  proxy = await startDynamoDbFidelityProxy(dynalite.endpoint);
  client = new DynamoDBClient(emulatorClientOptions(proxy));
  direct = new DynamoDBClient(emulatorClientOptions(dynalite));
  // dynalite is started with createTableMs: 0, so the table is ACTIVE when CreateTable answers.
  await client.send(
    new CreateTableCommand({
      TableName: table,
      KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
      AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
      BillingMode: "PAY_PER_REQUEST",
    }),
  );
  await client.send(new PutItemCommand({ TableName: table, Item: stored }));
});
afterAll(async () => {
  client.destroy();
  direct.destroy();
  await proxy.stop();
  await dynalite.stop();
});

async function failure(send: Promise<unknown>): Promise<ConditionalCheckFailedException> {
  const error = await send.then(
    () => expect.fail("the condition should have failed"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConditionalCheckFailedException);
  return error as ConditionalCheckFailedException;
}

const blocked = { ConditionExpression: "attribute_not_exists(pk)" } as const;

describe("DynamoDB fidelity proxy: ConditionalCheckFailedException carries the blocking item (DynamoDB API reference, ReturnValuesOnConditionCheckFailure)", () => {
  it("dynalite alone omits Item, which is what the proxy exists for", async () => {
    const error = await failure(
      direct.send(
        new PutItemCommand({
          TableName: table,
          Item: stored,
          ...blocked,
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      ),
    );
    expect(error.Item).toBeUndefined();
  });

  it.each([
    [
      "PutItem",
      () =>
        client.send(
          new PutItemCommand({
            TableName: table,
            Item: { pk: { S: "k-1" }, status: { S: "IN_PROGRESS" } },
            ...blocked,
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          }),
        ),
    ],
    [
      "UpdateItem",
      () =>
        client.send(
          new UpdateItemCommand({
            TableName: table,
            Key: { pk: { S: "k-1" } },
            UpdateExpression: "SET n = :n",
            ConditionExpression: "n = :other",
            ExpressionAttributeValues: { ":n": { N: "1" }, ":other": { N: "7" } },
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          }),
        ),
    ],
    [
      "DeleteItem",
      () =>
        client.send(
          new DeleteItemCommand({
            TableName: table,
            Key: { pk: { S: "k-1" } },
            ConditionExpression: "#s = :other",
            ExpressionAttributeNames: { "#s": "status" },
            ExpressionAttributeValues: { ":other": { S: "IN_PROGRESS" } },
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          }),
        ),
    ],
  ])(
    "%s with ALL_OLD: Item is the stored item in DynamoDB JSON, unchanged by the failed write",
    async (_op, command) => {
      const error = await failure(command());
      expect(error.Item).toEqual(stored);
      expect(error.message).toBe("The conditional request failed");
    },
  );

  it("without ALL_OLD (NONE or absent) the error has no Item, as on DynamoDB", async () => {
    for (const returnValues of ["NONE", undefined] as const) {
      const error = await failure(
        client.send(
          new PutItemCommand({
            TableName: table,
            Item: stored,
            ...blocked,
            ...(returnValues ? { ReturnValuesOnConditionCheckFailure: returnValues } : {}),
          }),
        ),
      );
      expect(error.Item).toBeUndefined();
    }
  });

  it("a condition that failed on an absent item returns no Item: there is none", async () => {
    const error = await failure(
      client.send(
        new UpdateItemCommand({
          TableName: table,
          Key: { pk: { S: "absent" } },
          UpdateExpression: "SET n = :n",
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeValues: { ":n": { N: "1" } },
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      ),
    );
    expect(error.Item).toBeUndefined();
  });

  it("passes other errors and successes through untouched", async () => {
    await expect(
      client.send(new PutItemCommand({ TableName: "no-such-table", Item: stored })),
    ).rejects.toMatchObject({ name: "ResourceNotFoundException" });
    const before = proxy.stats.itemsReturned;
    await client.send(
      new PutItemCommand({
        TableName: table,
        Item: { pk: { S: "k-2" } },
        ...blocked,
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
    expect(proxy.stats.itemsReturned).toBe(before);
  });
});
