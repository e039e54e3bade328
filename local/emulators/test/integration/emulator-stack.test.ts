import { DescribeTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DescribeStreamSummaryCommand, KinesisClient } from "@aws-sdk/client-kinesis";
import { GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmulatorStack, emulatorClientOptions } from "../../src/index.js";

describe("EmulatorStack", () => {
  let stack: EmulatorStack;
  beforeAll(async () => {
    stack = await EmulatorStack.start({ dynamodb: { createTableMs: 200 }, sqsS3: true, kinesis: true });
  });
  afterAll(() => stack?.stop());

  it("lists its endpoints in the order DynamoDB, SQS and S3, Kinesis", () => {
    expect(stack.endpoints).toEqual([stack.dynamodb.endpoint, stack.sqsS3.endpoint, stack.kinesis.endpoint]);
  });

  it("returns a table only once it is ACTIVE, though the emulator keeps it CREATING for a while", async () => {
    await stack.createTable({
      TableName: "items",
      AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" }],
      KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
    });
    const dynamodb = new DynamoDBClient(emulatorClientOptions(stack.dynamodb));
    const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: "items" }));
    expect(Table?.TableStatus).toBe("ACTIVE");
    dynamodb.destroy();
  });

  it("returns a stream only once it is ACTIVE", async () => {
    await stack.createStream("s", 2);
    const kinesis = new KinesisClient({
      ...emulatorClientOptions(stack.kinesis),
      requestHandler: new NodeHttpHandler(),
    });
    const { StreamDescriptionSummary } = await kinesis.send(
      new DescribeStreamSummaryCommand({ StreamName: "s" }),
    );
    expect(StreamDescriptionSummary).toMatchObject({ StreamStatus: "ACTIVE", OpenShardCount: 2 });
    kinesis.destroy();
  });

  it("creates a FIFO queue with its FIFO DLQ and the redrive policy that points at it", async () => {
    const queue = await stack.createQueue({
      name: "jobs.fifo",
      sharedAttributes: { FifoQueue: "true" },
      attributes: { VisibilityTimeout: "45" },
      dlq: { name: "jobs-dlq.fifo", maxReceiveCount: 3 },
    });
    const sqs = new SQSClient(emulatorClientOptions(stack.sqsS3));
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queue.url, AttributeNames: ["All"] }),
    );
    expect(Attributes).toMatchObject({ FifoQueue: "true", VisibilityTimeout: "45", QueueArn: queue.arn });
    expect(JSON.parse(Attributes?.RedrivePolicy ?? "{}")).toEqual({
      deadLetterTargetArn: queue.dlqArn,
      maxReceiveCount: 3,
    });
    const dlq = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queue.dlqUrl, AttributeNames: ["FifoQueue"] }),
    );
    expect(dlq.Attributes?.FifoQueue).toBe("true");
    sqs.destroy();
  });

  it("creates a queue without a DLQ when none is asked for", async () => {
    const queue = await stack.createQueue({ name: "plain" });
    expect(queue.dlqUrl).toBeUndefined();
    expect(queue.arn).toMatch(/:plain$/);
  });
});

describe("EmulatorStack without a service", () => {
  it("says how to start the service a suite reaches for but did not ask for", async () => {
    const stack = await EmulatorStack.start({ sqsS3: true });
    try {
      expect(() => stack.kinesis).toThrow(
        "this EmulatorStack has no Kinesis: start it with { kinesis: true }",
      );
      expect(() => stack.dynamodb).toThrow("start it with { dynamodb: {} }");
      await expect(stack.createStream("s")).rejects.toThrow("no Kinesis");
      expect(stack.endpoints).toEqual([stack.sqsS3.endpoint]);
    } finally {
      await stack.stop();
    }
  });
});
