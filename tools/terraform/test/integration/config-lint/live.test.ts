/**
 * `lint:config --live` reading a deployed environment: dev's resources created in moto's server through
 * the SDK, with values other than dev's settings file, then read back by liveSettings as the command reads
 * AWS (the SDK's usual endpoint and credentials sources, pointed at moto). What it reads replaces the file's
 * values; what is not deployed keeps them.
 */
import { request } from "node:http";
import { createServer, type Http2Server } from "node:http2";
import type { AddressInfo } from "node:net";
import { CreateRoleCommand, IAMClient } from "@aws-sdk/client-iam";
import {
  CreateStreamCommand,
  DescribeStreamSummaryCommand,
  IncreaseStreamRetentionPeriodCommand,
} from "@aws-sdk/client-kinesis";
import {
  CreateEventSourceMappingCommand,
  CreateFunctionCommand,
  LambdaClient,
  PutFunctionConcurrencyCommand,
} from "@aws-sdk/client-lambda";
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { type RunningMoto, startMoto } from "@mcp-pipeline/emulators";
import { type EnvironmentSettings, loadSettings, resourceNames, testTools } from "@mcp-pipeline/settings";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { liveSettings } from "../../../src/config-lint/index.js";

const root = `${import.meta.dirname}/../../../../..`;
const region = "us-east-1";
const credentials = { accessKeyId: "test", secretAccessKey: "test" };

let moto: RunningMoto;
let kinesisDoor: Http2Server | undefined;
let dev: EnvironmentSettings;

/**
 * The Kinesis client the command builds speaks HTTP/2 (for SubscribeToShard), which moto's server does not:
 * this server takes its requests in HTTP/2 without TLS and passes each to moto as it came, answer and all.
 */
async function kinesisOverHttp2(target: string): Promise<string> {
  const server = createServer((incoming, answer) => {
    const headers = Object.fromEntries(
      Object.entries(incoming.headers).filter(([name]) => !name.startsWith(":")),
    );
    const forward = request(
      new URL(incoming.url, target),
      { method: incoming.method, headers: { ...headers, host: new URL(target).host } },
      (reply) => {
        const { connection: _, "keep-alive": __, "transfer-encoding": ___, ...kept } = reply.headers;
        answer.writeHead(reply.statusCode ?? 502, kept);
        reply.pipe(answer);
      },
    );
    forward.on("error", () => answer.writeHead(502).end());
    incoming.pipe(forward);
  });
  kinesisDoor = server;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
const savedEnv = { ...process.env };

beforeAll(async () => {
  moto = await startMoto();
  dev = await loadSettings(root, "dev");
  // As the command is run: the SDK finds the endpoint and the credentials in the environment.
  delete process.env.AWS_PROFILE;
  process.env.AWS_ENDPOINT_URL = moto.endpoint;
  process.env.AWS_ENDPOINT_URL_KINESIS = await kinesisOverHttp2(moto.endpoint);
  process.env.AWS_ACCESS_KEY_ID = credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = credentials.secretAccessKey;
  await deploy(dev);
}, 300_000);

afterAll(async () => {
  process.env = savedEnv;
  kinesisDoor?.close();
  await moto?.stop();
});

/** An empty zip: moto keeps a function's code without running it. */
const EMPTY_ZIP = Buffer.from([0x50, 0x4b, 0x05, 0x06, ...new Array<number>(18).fill(0)]);

/**
 * dev's stream, processor (with its mapping), tool worker (mapping, queue, DLQ) and DLQ redrive function
 * (no mapping, a queue without a DLQ); no FIFO worker or session-jobs queue.
 */
async function deploy(settings: EnvironmentSettings): Promise<void> {
  const o = { endpoint: moto.endpoint, region, credentials };
  const names = resourceNames(settings.name_prefix);
  const iam = new IAMClient(o);
  const kinesis = kinesisClient(o);
  const lambda = new LambdaClient(o);
  const sqs = new SQSClient(o);
  const { Role } = await iam.send(
    new CreateRoleCommand({
      RoleName: "live-read",
      AssumeRolePolicyDocument: JSON.stringify({
        Version: "2012-10-17",
        Statement: [
          { Effect: "Allow", Principal: { Service: "lambda.amazonaws.com" }, Action: "sts:AssumeRole" },
        ],
      }),
    }),
  );
  const fn = async (name: string, timeout: number, variables: Record<string, string> = {}) =>
    lambda.send(
      new CreateFunctionCommand({
        FunctionName: name,
        Runtime: "nodejs22.x",
        Handler: "index.handler",
        Role: Role?.Arn,
        Code: { ZipFile: EMPTY_ZIP },
        Timeout: timeout,
        Environment: { Variables: variables },
      }),
    );

  await kinesis.send(new CreateStreamCommand({ StreamName: names.stream, ShardCount: 1 }));
  await kinesis.send(
    new IncreaseStreamRetentionPeriodCommand({ StreamName: names.stream, RetentionPeriodHours: 48 }),
  );
  const { StreamDescriptionSummary } = await kinesis.send(
    new DescribeStreamSummaryCommand({ StreamName: names.stream }),
  );
  await fn(names.functions.processor, 45);
  await lambda.send(
    new PutFunctionConcurrencyCommand({
      FunctionName: names.functions.processor,
      ReservedConcurrentExecutions: 3,
    }),
  );
  await lambda.send(
    new CreateEventSourceMappingCommand({
      FunctionName: names.functions.processor,
      EventSourceArn: StreamDescriptionSummary?.StreamARN,
      StartingPosition: "TRIM_HORIZON",
      BatchSize: 50,
      MaximumBatchingWindowInSeconds: 2,
      ParallelizationFactor: 3,
      MaximumRetryAttempts: 1,
      MaximumRecordAgeInSeconds: 600,
      BisectBatchOnFunctionError: false,
    }),
  );

  const toolJobs = names.queues.tool_jobs;
  const { QueueUrl: dlqUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: toolJobs.dlqName, Attributes: { MessageRetentionPeriod: "604800" } }),
  );
  const { Attributes: dlq } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["QueueArn"] }),
  );
  const { QueueUrl: toolJobsUrl } = await sqs.send(
    new CreateQueueCommand({
      QueueName: toolJobs.name,
      Attributes: {
        VisibilityTimeout: "120",
        MessageRetentionPeriod: "86400",
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq?.QueueArn, maxReceiveCount: 3 }),
      },
    }),
  );
  const { Attributes: toolJobsQueue } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: toolJobsUrl, AttributeNames: ["QueueArn"] }),
  );
  await fn(names.functions.tool_worker, 20, {
    [testTools.variable("tool_worker") ?? ""]: testTools.value(false),
  });
  await lambda.send(
    new PutFunctionConcurrencyCommand({
      FunctionName: names.functions.tool_worker,
      ReservedConcurrentExecutions: 4,
    }),
  );
  await lambda.send(
    new CreateEventSourceMappingCommand({
      FunctionName: names.functions.tool_worker,
      EventSourceArn: toolJobsQueue?.QueueArn,
      BatchSize: 5,
      ScalingConfig: { MaximumConcurrency: 2 },
      FunctionResponseTypes: ["ReportBatchItemFailures"],
    }),
  );

  await sqs.send(new CreateQueueCommand({ QueueName: names.queues.stream_failures.name }));
  await fn(names.functions.dlq_redrive, 15);
  for (const client of [iam, kinesis, lambda, sqs]) client.destroy();
}

describe("lint:config --live against a deployed environment (moto)", () => {
  it("reads the deployed stream, functions, mappings and queues in place of the file's values", async () => {
    const live = await liveSettings(dev, region);

    expect(live.stream).toEqual({ ...dev.stream, retention_period_hours: 48 });
    expect(live.processor).toEqual({
      ...dev.processor,
      timeout_seconds: 45,
      reserved_concurrency: 3,
      esm: {
        ...dev.processor.esm,
        batch_size: 50,
        maximum_batching_window_in_seconds: 2,
        parallelization_factor: 3,
        maximum_retry_attempts: 1,
        maximum_record_age_in_seconds: 600,
        bisect_batch_on_function_error: false,
        report_batch_item_failures: false,
        on_failure_destination: false,
      },
    });
    expect(live.tool_worker).toEqual({
      ...dev.tool_worker,
      timeout_seconds: 20,
      reserved_concurrency: 4,
      esm: {
        batch_size: 5,
        maximum_batching_window_in_seconds: 0,
        maximum_concurrency: 2,
        report_batch_item_failures: true,
      },
      queue: {
        visibility_timeout_seconds: 120,
        message_retention_seconds: 86_400,
        max_receive_count: 3,
        dlq_message_retention_seconds: 604_800,
      },
    });
    // Deployed without a mapping or reserved concurrency, its queue without a DLQ.
    expect(live.dlq_redrive).toEqual({
      ...dev.dlq_redrive,
      timeout_seconds: 15,
      reserved_concurrency: null,
      queue: {
        visibility_timeout_seconds: 30,
        message_retention_seconds: 345_600,
        max_receive_count: 0,
        dlq_message_retention_seconds: 0,
      },
    });
    // Not deployed: the file's values stand.
    expect(live.fifo_worker).toEqual(dev.fifo_worker);
    // The file offers the test tools; the one deployed worker does not.
    expect(dev.test_tools).toBe(true);
    expect(live.test_tools).toBe(false);
  });
});
