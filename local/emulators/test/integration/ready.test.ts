import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  PutItemCommand,
} from "@aws-sdk/client-dynamodb";
import {
  CreateStreamCommand,
  DescribeStreamSummaryCommand,
  KinesisClient,
  ListShardsCommand,
  PutRecordCommand,
  SplitShardCommand,
} from "@aws-sdk/client-kinesis";
import { HeadBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createBucketWhenReady,
  createQueueWhenReady,
  createStreamWhenActive,
  createTableWhenActive,
  emulatorClientOptions,
  ResourceNotReadyError,
  type RunningEmulator,
  startDynamoDb,
  startKinesis,
  startSqsS3,
  waitForStreamActive,
  waitForTableActive,
} from "../../src/index.js";

// AWS takes seconds to turn a table or stream ACTIVE, and a write before that fails (docs/aws-semantics.md §10
// and the DynamoDB/Kinesis API references: CreateTable and CreateStream answer CREATING). The emulators
// here take time too, so a test that writes without waiting fails; the helpers wait by asking.
const SLOW_MS = 300;
// Longer than any test runs: a resource that is still CREATING when the assertions run, whatever the load.
const NEVER_MS = 10 * 60_000;

let dynamoDb: RunningEmulator;
let slowDynamoDb: RunningEmulator;
let stuckDynamoDb: RunningEmulator;
let kinesis: RunningEmulator;
let stuckKinesis: RunningEmulator;
let sqsS3: RunningEmulator;

beforeAll(async () => {
  [dynamoDb, slowDynamoDb, stuckDynamoDb, kinesis, stuckKinesis, sqsS3] = await Promise.all([
    startDynamoDb(),
    startDynamoDb({ createTableMs: SLOW_MS }),
    startDynamoDb({ createTableMs: NEVER_MS }),
    startKinesis({ createStreamMs: SLOW_MS, updateStreamMs: SLOW_MS }),
    startKinesis({ createStreamMs: NEVER_MS }),
    startSqsS3(),
  ]);
});
afterAll(async () => {
  await Promise.all(
    [dynamoDb, slowDynamoDb, stuckDynamoDb, kinesis, stuckKinesis, sqsS3].map((e) => e?.stop()),
  );
});

// The SDK's Kinesis client defaults to HTTP/2 (for SubscribeToShard); kinesalite speaks HTTP/1.1.
const kinesisClient = (emulator: RunningEmulator) =>
  new KinesisClient({ ...emulatorClientOptions(emulator), requestHandler: new NodeHttpHandler() });

const table = (name: string) => ({
  TableName: name,
  BillingMode: "PAY_PER_REQUEST" as const,
  AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" as const }],
  KeySchema: [{ AttributeName: "id", KeyType: "HASH" as const }],
});

describe("a table is used only once it is ACTIVE", () => {
  it("a write to a table that is still CREATING is refused (what the helpers protect against)", async () => {
    const client = new DynamoDBClient(emulatorClientOptions(stuckDynamoDb));
    await client.send(new CreateTableCommand(table("creating")));
    const { Table } = await client.send(new DescribeTableCommand({ TableName: "creating" }));
    expect(Table?.TableStatus).toBe("CREATING");
    await expect(
      client.send(new PutItemCommand({ TableName: "creating", Item: { id: { S: "a" } } })),
    ).rejects.toMatchObject({ name: "ResourceNotFoundException" });
    const waiting = waitForTableActive(client, "creating", { maxWaitSeconds: 0.5 });
    await expect(waiting).rejects.toBeInstanceOf(ResourceNotReadyError);
    await expect(waiting).rejects.toMatchObject({ resource: "table creating" });
  });

  it("createTableWhenActive returns once DescribeTable says ACTIVE, and the first write succeeds", async () => {
    const client = new DynamoDBClient(emulatorClientOptions(slowDynamoDb));
    await createTableWhenActive(client, table("slow"));
    const { Table } = await client.send(new DescribeTableCommand({ TableName: "slow" }));
    expect(Table?.TableStatus).toBe("ACTIVE");
    await client.send(new PutItemCommand({ TableName: "slow", Item: { id: { S: "first" } } }));
  });

  it("a table that does not exist is not waited for forever: the wait ends with the resource named", async () => {
    const client = new DynamoDBClient(emulatorClientOptions(dynamoDb));
    await expect(waitForTableActive(client, "absent", { maxWaitSeconds: 0.3 })).rejects.toMatchObject({
      name: "ResourceNotReadyError",
      resource: "table absent",
    });
  });
});

describe("a stream is used only once it is ACTIVE", () => {
  it("a put to a stream that is still CREATING is refused", async () => {
    const client = kinesisClient(stuckKinesis);
    await client.send(new CreateStreamCommand({ StreamName: "creating", ShardCount: 1 }));
    const { StreamDescriptionSummary } = await client.send(
      new DescribeStreamSummaryCommand({ StreamName: "creating" }),
    );
    expect(StreamDescriptionSummary?.StreamStatus).toBe("CREATING");
    await expect(
      client.send(
        new PutRecordCommand({ StreamName: "creating", PartitionKey: "k", Data: new Uint8Array([1]) }),
      ),
    ).rejects.toMatchObject({ name: "ResourceNotFoundException" });
    await expect(waitForStreamActive(client, "creating", { maxWaitSeconds: 0.5 })).rejects.toBeInstanceOf(
      ResourceNotReadyError,
    );
  });

  it("createStreamWhenActive, and waitForStreamActive after SplitShard (UPDATING until done)", async () => {
    const client = kinesisClient(kinesis);
    await createStreamWhenActive(client, { StreamName: "slow", ShardCount: 1 });
    await client.send(
      new PutRecordCommand({ StreamName: "slow", PartitionKey: "k", Data: new Uint8Array([1]) }),
    );
    const { Shards = [] } = await client.send(new ListShardsCommand({ StreamName: "slow" }));
    await client.send(
      new SplitShardCommand({
        StreamName: "slow",
        ShardToSplit: Shards[0]?.ShardId,
        NewStartingHashKey: "170141183460469231731687303715884105728",
      }),
    );
    await waitForStreamActive(client, "slow");
    const after = await client.send(new ListShardsCommand({ StreamName: "slow" }));
    expect(after.Shards).toHaveLength(3);
    await client.send(
      new PutRecordCommand({ StreamName: "slow", PartitionKey: "k", Data: new Uint8Array([2]) }),
    );
  });
});

describe("queues and buckets answer before they are used", () => {
  it("createQueueWhenReady returns the URL, the ARN and the attributes the queue answers with", async () => {
    const client = new SQSClient(emulatorClientOptions(sqsS3));
    const queue = await createQueueWhenReady(client, {
      QueueName: "ready",
      Attributes: { VisibilityTimeout: "45" },
    });
    expect(queue.arn).toMatch(/:ready$/);
    expect(queue.attributes.VisibilityTimeout).toBe("45");
    await client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: "first" }));
  });

  it("createBucketWhenReady returns once HeadBucket finds the bucket", async () => {
    const client = new S3Client({ ...emulatorClientOptions(sqsS3), forcePathStyle: true });
    await createBucketWhenReady(client, { Bucket: "ready-bucket" });
    const head = await client.send(new HeadBucketCommand({ Bucket: "ready-bucket" }));
    expect(head.$metadata.httpStatusCode).toBe(200);
  });
});
