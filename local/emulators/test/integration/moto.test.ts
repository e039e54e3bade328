import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  PutItemCommand,
  UpdateTimeToLiveCommand,
} from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTableWhenActive,
  emulatorClientOptions,
  type RunningEmulator,
  type RunningMoto,
  startDynamoDb,
  startMoto,
} from "../../src/index.js";

const table = (name: string) => ({
  TableName: name,
  BillingMode: "PAY_PER_REQUEST" as const,
  AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" as const }],
  KeySchema: [{ AttributeName: "id", KeyType: "HASH" as const }],
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("startMoto", () => {
  it("installs (once, under a lock) and starts moto's server on 127.0.0.1; stop ends its process group", async () => {
    const [first, second] = await Promise.all([startMoto(), startMoto()]);
    try {
      expect(first.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(second.endpoint).not.toBe(first.endpoint);
      const client = new DynamoDBClient(emulatorClientOptions(first));
      await createTableWhenActive(client, table("on-moto"));
      await client.send(new PutItemCommand({ TableName: "on-moto", Item: { id: { S: "a" } } }));
      await first.reset();
      await expect(
        client.send(new PutItemCommand({ TableName: "on-moto", Item: { id: { S: "a" } } })),
      ).rejects.toMatchObject({ name: "ResourceNotFoundException" });
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
    expect(alive(first.pid)).toBe(false);
    expect(alive(second.pid)).toBe(false);
  }, 300_000);
});

// docs/emulator-fidelity.md: where dynalite and moto give different answers, and which is AWS's.
describe("conditional-check failures carry the item in DynamoDB JSON (AWS) on moto, nothing on dynalite", () => {
  let moto: RunningMoto;
  let dynalite: RunningEmulator;
  beforeAll(async () => {
    [moto, dynalite] = await Promise.all([startMoto(), startDynamoDb()]);
  }, 300_000);
  afterAll(async () => {
    await Promise.all([moto?.stop(), dynalite?.stop()]);
  });

  const failedWrite = async (endpoint: RunningEmulator) => {
    const client = new DynamoDBClient(emulatorClientOptions(endpoint));
    await createTableWhenActive(client, table("conditional"));
    await client.send(
      new PutItemCommand({ TableName: "conditional", Item: { id: { S: "k" }, status: { S: "COMPLETED" } } }),
    );
    return client
      .send(
        new PutItemCommand({
          TableName: "conditional",
          Item: { id: { S: "k" } },
          ConditionExpression: "attribute_not_exists(id)",
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      )
      .then(
        () => undefined,
        (error: unknown) => error as { name: string; Item?: unknown },
      );
  };

  it("moto answers as the DynamoDB API reference says: Item as AttributeValue maps", async () => {
    const error = await failedWrite(moto);
    expect(error?.name).toBe("ConditionalCheckFailedException");
    expect(error?.Item).toEqual({ id: { S: "k" }, status: { S: "COMPLETED" } });
  });

  it("dynalite omits the item (why the idempotency suite also runs on moto)", async () => {
    const error = await failedWrite(dynalite);
    expect(error?.name).toBe("ConditionalCheckFailedException");
    expect(error?.Item).toBeUndefined();
  });

  it.each([
    ["dynalite", () => dynalite],
    ["moto", () => moto],
  ] as const)(
    "%s: UpdateTimeToLive enables TTL and DescribeTimeToLive reports it",
    async (_name, endpoint) => {
      const client = new DynamoDBClient(emulatorClientOptions(endpoint()));
      await createTableWhenActive(client, table("ttl-table"));
      const before = await client.send(new DescribeTimeToLiveCommand({ TableName: "ttl-table" }));
      expect(before.TimeToLiveDescription?.TimeToLiveStatus).toBe("DISABLED");
      const updated = await client.send(
        new UpdateTimeToLiveCommand({
          TableName: "ttl-table",
          TimeToLiveSpecification: { AttributeName: "expiresAt", Enabled: true },
        }),
      );
      expect(updated.TimeToLiveSpecification).toEqual({ AttributeName: "expiresAt", Enabled: true });
      const after = await client.send(new DescribeTimeToLiveCommand({ TableName: "ttl-table" }));
      expect(after.TimeToLiveDescription).toEqual({
        TimeToLiveStatus: "ENABLED",
        AttributeName: "expiresAt",
      });
    },
  );

  it("dynalite (extended here) refuses to enable TTL twice and a table that is not there, as DynamoDB does", async () => {
    const client = new DynamoDBClient(emulatorClientOptions(dynalite));
    await expect(
      client.send(
        new UpdateTimeToLiveCommand({
          TableName: "ttl-table",
          TimeToLiveSpecification: { AttributeName: "expiresAt", Enabled: true },
        }),
      ),
    ).rejects.toMatchObject({ name: "ValidationException", message: "TimeToLive is already enabled" });
    await expect(
      client.send(
        new UpdateTimeToLiveCommand({
          TableName: "no-such-table",
          TimeToLiveSpecification: { AttributeName: "expiresAt", Enabled: true },
        }),
      ),
    ).rejects.toMatchObject({ name: "ResourceNotFoundException" });
    await expect(
      client.send(
        new UpdateTimeToLiveCommand({ TableName: "ttl-table", TimeToLiveSpecification: undefined }),
      ),
    ).rejects.toMatchObject({ name: "ValidationException" });
  });

  it("dynalite: a table deleted and created again starts with TTL disabled", async () => {
    const client = new DynamoDBClient(emulatorClientOptions(dynalite));
    await createTableWhenActive(client, table("ttl-again"));
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: "ttl-again",
        TimeToLiveSpecification: { AttributeName: "expiresAt", Enabled: true },
      }),
    );
    await client.send(new DeleteTableCommand({ TableName: "ttl-again" }));
    await client.send(new CreateTableCommand(table("ttl-again")));
    const { TimeToLiveDescription } = await client.send(
      new DescribeTimeToLiveCommand({ TableName: "ttl-again" }),
    );
    expect(TimeToLiveDescription).toEqual({ TimeToLiveStatus: "DISABLED" });
  });
});
