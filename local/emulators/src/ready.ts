/**
 * Creating a resource and being able to use it are two moments on AWS: a table and a stream are
 * CREATING (a stream UPDATING after a shard change) before they are ACTIVE, and a write in between
 * fails ("Stream ... not found", ResourceNotFoundException). Everything that creates a resource waits
 * here for the state AWS documents as usable, by asking (SDK waiters or Describe/Get polling), never by
 * sleeping a fixed time. The emulators can be started with creation delays to prove the waiting.
 */
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";
import {
  CreateStreamCommand,
  type CreateStreamCommandInput,
  type KinesisClient,
  waitUntilStreamExists,
} from "@aws-sdk/client-kinesis";
import {
  CreateBucketCommand,
  type CreateBucketCommandInput,
  type S3Client,
  waitUntilBucketExists,
} from "@aws-sdk/client-s3";
import {
  CreateQueueCommand,
  type CreateQueueCommandInput,
  GetQueueAttributesCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { backoffDelayMs, retry } from "@mcp-pipeline/retry";

/** How long a resource may take to become usable before the wait gives up (seconds), and the polling. */
export interface ReadyWaitOptions {
  readonly maxWaitSeconds?: number;
}

/** A resource did not become usable in time; `resource` names it, `cause` holds the last answer. */
export class ResourceNotReadyError extends Error {
  readonly resource: string;

  constructor(resource: string, options?: ErrorOptions) {
    super(`${resource} did not become ready`, options);
    this.name = "ResourceNotReadyError";
    this.resource = resource;
  }
}

// The SDK waiters' defaults poll every 20 s (DynamoDB) and 10 s (Kinesis); emulators and moto turn a
// resource ACTIVE in milliseconds, so poll from 50 ms, backing off to 1 s.
const POLL = { minDelay: 0.05, maxDelay: 1 } as const;
const DEFAULT_MAX_WAIT_SECONDS = 120;

function waiterConfig<C>(client: C, options: ReadyWaitOptions) {
  return { client, ...POLL, maxWaitTime: options.maxWaitSeconds ?? DEFAULT_MAX_WAIT_SECONDS };
}

async function waited(resource: string, wait: () => Promise<unknown>): Promise<void> {
  try {
    await wait();
  } catch (error) {
    throw new ResourceNotReadyError(resource, { cause: error });
  }
}

/** Resolves once DescribeTable says ACTIVE. */
export function waitForTableActive(
  client: DynamoDBClient,
  tableName: string,
  options: ReadyWaitOptions = {},
): Promise<void> {
  return waited(`table ${tableName}`, () =>
    waitUntilTableExists(waiterConfig(client, options), { TableName: tableName }),
  );
}

/** Resolves once DescribeStream says ACTIVE: after CreateStream, and after SplitShard, MergeShards or UpdateShardCount. */
export function waitForStreamActive(
  client: KinesisClient,
  streamName: string,
  options: ReadyWaitOptions = {},
): Promise<void> {
  return waited(`stream ${streamName}`, () =>
    waitUntilStreamExists(waiterConfig(client, options), { StreamName: streamName }),
  );
}

/** Resolves once HeadBucket answers 200. */
export function waitForBucket(
  client: S3Client,
  bucket: string,
  options: ReadyWaitOptions = {},
): Promise<void> {
  return waited(`bucket ${bucket}`, () =>
    waitUntilBucketExists(waiterConfig(client, options), { Bucket: bucket }),
  );
}

/**
 * Resolves once GetQueueAttributes answers for the queue. SQS has no queue status and asks callers to
 * wait before using a new queue; answering its attributes is the observable sign that it is there.
 */
export async function waitForQueue(
  client: SQSClient,
  queueUrl: string,
  options: ReadyWaitOptions = {},
): Promise<Record<string, string>> {
  const deadline = Date.now() + (options.maxWaitSeconds ?? DEFAULT_MAX_WAIT_SECONDS) * 1000;
  const delayMs = (retry: number) =>
    backoffDelayMs(retry, { baseMs: POLL.minDelay * 1000, capMs: POLL.maxDelay * 1000 });
  try {
    const { Attributes = {} } = await retry(
      () => client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["All"] })),
      {
        maxAttempts: Number.POSITIVE_INFINITY,
        delayMs,
        // Give up rather than wait past the deadline.
        retryable: (_error, attempt) => Date.now() + delayMs(attempt) <= deadline,
      },
    );
    return Attributes;
  } catch (error) {
    throw new ResourceNotReadyError(`queue ${queueUrl}`, { cause: error });
  }
}

/** CreateTable, then wait until it is ACTIVE. */
export async function createTableWhenActive(
  client: DynamoDBClient,
  input: CreateTableCommandInput,
  options: ReadyWaitOptions = {},
): Promise<void> {
  await client.send(new CreateTableCommand(input));
  await waitForTableActive(client, input.TableName ?? "", options);
}

/** CreateStream, then wait until it is ACTIVE. */
export async function createStreamWhenActive(
  client: KinesisClient,
  input: CreateStreamCommandInput,
  options: ReadyWaitOptions = {},
): Promise<void> {
  await client.send(new CreateStreamCommand(input));
  await waitForStreamActive(client, input.StreamName ?? "", options);
}

/** CreateBucket, then wait until HeadBucket finds it. */
export async function createBucketWhenReady(
  client: S3Client,
  input: CreateBucketCommandInput,
  options: ReadyWaitOptions = {},
): Promise<void> {
  await client.send(new CreateBucketCommand(input));
  await waitForBucket(client, input.Bucket ?? "", options);
}

/** CreateQueue, then wait until its attributes answer; returns the URL, the ARN and every attribute. */
export async function createQueueWhenReady(
  client: SQSClient,
  input: CreateQueueCommandInput,
  options: ReadyWaitOptions = {},
): Promise<{ readonly url: string; readonly arn: string; readonly attributes: Record<string, string> }> {
  const { QueueUrl } = await client.send(new CreateQueueCommand(input));
  if (!QueueUrl) throw new ResourceNotReadyError(`queue ${input.QueueName}`);
  const attributes = await waitForQueue(client, QueueUrl, options);
  return { url: QueueUrl, arn: attributes.QueueArn ?? "", attributes };
}
