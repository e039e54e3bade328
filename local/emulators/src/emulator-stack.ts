/**
 * The one place tests start AWS endpoints on loopback and create resources in them: a stack of the
 * services a suite asks for, each used only once it answers, resources created and waited for until
 * ACTIVE or readable (never for a timer), everything stopped by `stop()`.
 */

import type { CreateTableCommandInput } from "@aws-sdk/client-dynamodb";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { KinesisClient } from "@aws-sdk/client-kinesis";
import { S3Client } from "@aws-sdk/client-s3";
import { SQSClient } from "@aws-sdk/client-sqs";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { startKinesisEndpoint, startSqsS3Endpoint } from "./backend.js";
import { startFaithfulDynamoDb } from "./dynamodb-fidelity-proxy.js";
import type { DynamoDbDelays } from "./dynamodb-server.mjs";
import { emulatorClientOptions, startKinesis, startSqsS3 } from "./embedded.js";
import type { RunningEmulator } from "./loopback.js";
import {
  createBucketWhenReady,
  createQueueWhenReady,
  createStreamWhenActive,
  createTableWhenActive,
} from "./ready.js";

export interface EmulatorStackOptions {
  /**
   * DynamoDB as AWS answers (dynalite behind the fidelity proxy: a failed conditional write returns the
   * item, tables stay CREATING for `createTableMs`).
   */
  readonly dynamodb?: DynamoDbDelays;
  /** SQS and S3 (one fauxqs server). */
  readonly sqsS3?: boolean;
  readonly kinesis?: boolean;
  /**
   * Start Kinesis and SQS through start*Endpoint, which MCP_TEST_AWS=moto points at moto's server, for
   * the suites vitest.config.ts runs against both; otherwise the embedded emulators always.
   */
  readonly followBackend?: boolean;
}

/** A queue and, when it was asked for, its DLQ. */
export interface StackQueue {
  readonly url: string;
  readonly arn: string;
  readonly dlqUrl?: string;
  readonly dlqArn?: string;
}

export interface QueueSpec {
  /** Ends in ".fifo" for a FIFO queue (its DLQ must then be one too). */
  readonly name: string;
  /** The source queue's attributes; `sharedAttributes` are added to it and to its DLQ. */
  readonly attributes?: Readonly<Record<string, string>>;
  readonly sharedAttributes?: Readonly<Record<string, string>>;
  /** A DLQ that receives a message after `maxReceiveCount` receives (the queue's redrive policy). */
  readonly dlq?: { readonly name: string; readonly maxReceiveCount: number };
}

const absent = (service: string, option: string) =>
  new Error(`this EmulatorStack has no ${service}: start it with { ${option} }`);

export class EmulatorStack {
  #dynamodbClient: DynamoDBClient | undefined;
  #sqsClient: SQSClient | undefined;
  #s3Client: S3Client | undefined;
  #kinesisClient: KinesisClient | undefined;

  private constructor(
    private readonly running: {
      readonly dynamodb?: RunningEmulator;
      readonly sqsS3?: RunningEmulator;
      readonly kinesis?: RunningEmulator;
    },
  ) {}

  /** Starts the services asked for side by side; if one fails to start, the others are stopped. */
  static async start(options: EmulatorStackOptions): Promise<EmulatorStack> {
    const started = await Promise.allSettled([
      options.dynamodb ? startFaithfulDynamoDb(options.dynamodb) : undefined,
      options.sqsS3 ? (options.followBackend ? startSqsS3Endpoint() : startSqsS3()) : undefined,
      options.kinesis ? (options.followBackend ? startKinesisEndpoint() : startKinesis()) : undefined,
    ]);
    const failed = started.find((s) => s.status === "rejected");
    if (failed) {
      await Promise.all(started.map((s) => (s.status === "fulfilled" ? s.value?.stop() : undefined)));
      throw failed.reason;
    }
    const [dynamodb, sqsS3, kinesis] = started.map((s) => (s.status === "fulfilled" ? s.value : undefined));
    return new EmulatorStack({
      ...(dynamodb ? { dynamodb } : {}),
      ...(sqsS3 ? { sqsS3 } : {}),
      ...(kinesis ? { kinesis } : {}),
    });
  }

  get dynamodb(): RunningEmulator {
    const e = this.running.dynamodb;
    if (!e) throw absent("DynamoDB", "dynamodb: {}");
    return e;
  }

  get sqsS3(): RunningEmulator {
    const e = this.running.sqsS3;
    if (!e) throw absent("SQS and S3", "sqsS3: true");
    return e;
  }

  get kinesis(): RunningEmulator {
    const e = this.running.kinesis;
    if (!e) throw absent("Kinesis", "kinesis: true");
    return e;
  }

  /** The endpoints started, in the order DynamoDB, SQS and S3, Kinesis. */
  get endpoints(): string[] {
    const { dynamodb, sqsS3, kinesis } = this.running;
    return [dynamodb, sqsS3, kinesis].flatMap((e) => (e ? [e.endpoint] : []));
  }

  // The stack's own clients, for creating resources; suites build theirs (document clients, the
  // package's factories) from the emulators with emulatorClientOptions.
  private get dynamodbClient(): DynamoDBClient {
    this.#dynamodbClient ??= new DynamoDBClient(emulatorClientOptions(this.dynamodb));
    return this.#dynamodbClient;
  }

  private get sqsClient(): SQSClient {
    this.#sqsClient ??= new SQSClient(emulatorClientOptions(this.sqsS3));
    return this.#sqsClient;
  }

  private get s3Client(): S3Client {
    this.#s3Client ??= new S3Client({ ...emulatorClientOptions(this.sqsS3), forcePathStyle: true });
    return this.#s3Client;
  }

  private get kinesisClient(): KinesisClient {
    // HTTP/1.1: the Kinesis client's default handler is HTTP/2 (for SubscribeToShard), which kinesalite
    // and the proxies do not speak.
    this.#kinesisClient ??= new KinesisClient({
      ...emulatorClientOptions(this.kinesis),
      requestHandler: new NodeHttpHandler(),
    });
    return this.#kinesisClient;
  }

  /** CreateTable, returning once the table is ACTIVE. */
  async createTable(definition: CreateTableCommandInput): Promise<void> {
    await createTableWhenActive(this.dynamodbClient, definition);
  }

  /** CreateBucket, returning once HeadBucket finds it. */
  async createBucket(name: string): Promise<void> {
    await createBucketWhenReady(this.s3Client, { Bucket: name });
  }

  /** CreateStream, returning once it is ACTIVE. */
  async createStream(name: string, shards = 1): Promise<void> {
    await createStreamWhenActive(this.kinesisClient, { StreamName: name, ShardCount: shards });
  }

  /** The DLQ (when asked for) first, then the queue with its redrive policy; both readable on return. */
  async createQueue(spec: QueueSpec): Promise<StackQueue> {
    const shared = spec.sharedAttributes ?? {};
    const dlq = spec.dlq
      ? await createQueueWhenReady(this.sqsClient, { QueueName: spec.dlq.name, Attributes: { ...shared } })
      : undefined;
    const redrive =
      dlq && spec.dlq
        ? {
            RedrivePolicy: JSON.stringify({
              deadLetterTargetArn: dlq.arn,
              maxReceiveCount: spec.dlq.maxReceiveCount,
            }),
          }
        : {};
    const queue = await createQueueWhenReady(this.sqsClient, {
      QueueName: spec.name,
      Attributes: { ...shared, ...redrive, ...spec.attributes },
    });
    return { url: queue.url, arn: queue.arn, ...(dlq ? { dlqUrl: dlq.url, dlqArn: dlq.arn } : {}) };
  }

  async stop(): Promise<void> {
    for (const client of [this.#dynamodbClient, this.#sqsClient, this.#s3Client, this.#kinesisClient]) {
      client?.destroy();
    }
    const { dynamodb, sqsS3, kinesis } = this.running;
    await Promise.all([dynamodb?.stop(), sqsS3?.stop(), kinesis?.stop()]);
  }
}
