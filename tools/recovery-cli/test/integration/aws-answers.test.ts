import {
  CloudWatchClient,
  PutMetricAlarmCommand,
  PutMetricDataCommand,
  SetAlarmStateCommand,
} from "@aws-sdk/client-cloudwatch";
import { CreateTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import {
  GetQueueUrlCommand,
  PurgeQueueCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { createQueueWhenReady, type RunningEmulator } from "@mcp-pipeline/emulators";
import { startMotoServer } from "@mcp-pipeline/emulators/testing";
import { countMessages } from "@mcp-pipeline/recovery";
import { QUEUE_KEYS, resourceNames } from "@mcp-pipeline/settings";
import { toolCallsTableDefinition } from "@mcp-pipeline/tool-calls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pipelineStatus } from "../../src/index.js";
import { recover } from "../run-recover.js";

/**
 * `status`, `triage` and `redrive` where the answers are AWS's (moto's server): STS's account for the
 * credentials, CloudWatch's IteratorAge, ApproximateAgeOfOldestMessage and alarm states, a bucket's region
 * (HeadBucket), ListDeadLetterSourceQueues, and an endpoint without StartMessageMoveTask. Only the name
 * prefix is given: every resource is found by the names Terraform gives it.
 */
const PREFIX = "mcp-aws";
const REGION = "eu-west-1";
const ACCOUNT = "123456789012";
const names = resourceNames(PREFIX, { accountId: ACCOUNT });
let moto: RunningEmulator;
let env: Record<string, string>;
let sqs: SQSClient;

beforeAll(async () => {
  moto = await startMotoServer();
  const options = {
    endpoint: moto.endpoint,
    region: REGION,
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
  };
  sqs = sqsClient(options);
  for (const key of QUEUE_KEYS) {
    const q = names.queues[key];
    const type = q.fifo ? { FifoQueue: "true" } : {};
    const dlq = await createQueueWhenReady(sqs, { QueueName: q.dlqName, Attributes: type });
    await createQueueWhenReady(sqs, {
      QueueName: q.name,
      Attributes: {
        ...type,
        VisibilityTimeout: "60",
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 5 }),
      },
    });
  }
  const dynamodb = new DynamoDBClient(options);
  await dynamodb.send(new CreateTableCommand(toolCallsTableDefinition(names.toolCallsTable)));
  dynamodb.destroy();
  const s3 = new S3Client({ ...options, forcePathStyle: true });
  await s3.send(
    new CreateBucketCommand({
      Bucket: names.quarantineBucket,
      CreateBucketConfiguration: { LocationConstraint: REGION },
    }),
  );
  s3.destroy();
  // A bucket of another region is created through that region, as S3 requires.
  const oregon = new S3Client({ ...options, region: "us-west-2", forcePathStyle: true });
  await oregon.send(
    new CreateBucketCommand({
      Bucket: `${PREFIX}-elsewhere-${ACCOUNT}`,
      CreateBucketConfiguration: { LocationConstraint: "us-west-2" },
    }),
  );
  oregon.destroy();
  // What Lambda and SQS publish, and the alarm Terraform creates on it, firing.
  const cloudwatch = new CloudWatchClient(options);
  await cloudwatch.send(
    new PutMetricDataCommand({
      Namespace: "AWS/Lambda",
      MetricData: [
        {
          MetricName: "IteratorAge",
          Dimensions: [{ Name: "FunctionName", Value: names.functions.processor }],
          Value: 180_000,
        },
      ],
    }),
  );
  await cloudwatch.send(
    new PutMetricDataCommand({
      Namespace: "AWS/SQS",
      MetricData: [
        {
          MetricName: "ApproximateAgeOfOldestMessage",
          Dimensions: [{ Name: "QueueName", Value: names.queues.tool_jobs.name }],
          Value: 150,
        },
      ],
    }),
  );
  const alarm = `${PREFIX}-processor-iterator-age`;
  await cloudwatch.send(
    new PutMetricAlarmCommand({
      AlarmName: alarm,
      Namespace: "AWS/Lambda",
      MetricName: "IteratorAge",
      Dimensions: [{ Name: "FunctionName", Value: names.functions.processor }],
      Statistic: "Maximum",
      Period: 60,
      EvaluationPeriods: 1,
      Threshold: 60_000,
      ComparisonOperator: "GreaterThanThreshold",
    }),
  );
  await cloudwatch.send(
    new SetAlarmStateCommand({ AlarmName: alarm, StateValue: "ALARM", StateReason: "lagging" }),
  );
  cloudwatch.destroy();
  env = {
    AWS_REGION: REGION,
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    AWS_ENDPOINT_URL: moto.endpoint,
  };
}, 300_000);
afterAll(async () => {
  sqs?.destroy();
  await moto?.stop();
});

describe("status with CloudWatch (item 9)", () => {
  it("reads the iterator age, the queues' oldest ages and the firing alarms; the lag and the alarm need a person", async () => {
    const run = await recover(["status", "--prefix", PREFIX], env);
    expect(run.out).toContain(`account ${ACCOUNT}, region ${REGION}`);
    expect(run.out).toContain("processor iterator age: 3 min 0 s");
    expect(run.out).toMatch(new RegExp(`${names.queues.tool_jobs.name}\\s+0\\s+0\\s+0\\s+-`));
    expect(run.out).toContain(`alarms in ALARM: ${PREFIX}-processor-iterator-age`);
    expect(run.out).toContain("  - the processor lags the stream by 3 min 0 s (over 60 s)");
    expect(run.out).toContain(`  - alarm ${PREFIX}-processor-iterator-age is in ALARM`);
    expect(run.code).toBe(4);
    const json = JSON.parse((await recover(["status", "--prefix", PREFIX, "--json"], env)).out);
    expect(json.iteratorAge).toEqual({ seconds: 180, from: "cloudwatch" });
    expect(json.queues.find((q: { name: string }) => q.name === names.queues.tool_jobs.name)).toMatchObject({
      oldest: { seconds: 150, from: "cloudwatch" },
      pagesOverSeconds: 120,
    });
  });

  it("--max-iterator-age over the lag: the age is shown, the lag needs no person; no FIFO group is stuck", async () => {
    const run = await recover(["status", "--prefix", PREFIX, "--max-iterator-age", "600"], env);
    expect(run.out).toContain("processor iterator age: 3 min 0 s");
    expect(run.out).not.toContain("the processor lags the stream");
    expect(run.out).toMatch(/^stuck FIFO groups \(oldest unfinished call waiting over 60 s\): none$/m);
    expect(run.out).toContain(`  - alarm ${PREFIX}-processor-iterator-age is in ALARM`);
    expect(run.code).toBe(4);
  });

  it("a prefix with no queue and no alarm: each queue not found, no alarm in ALARM", async () => {
    const run = await recover(["status", "--prefix", "mcp-void"], env);
    expect(run.out).toContain(
      [
        "  tool-jobs: not found (SQS has no queue mcp-void-tool-jobs)",
        "  session-jobs: not found (SQS has no queue mcp-void-session-jobs.fifo)",
        "  stream-failures: not found (SQS has no queue mcp-void-stream-failures)",
        "stuck FIFO groups: n/a (no FIFO queue found)",
        "processor iterator age: n/a (no datapoint in the last 10 minutes)",
        "alarms in ALARM: none",
        "attention:",
      ].join("\n"),
    );
    expect(run.code).toBe(4);
  });

  it("without an endpoint for CloudWatch while SQS and STS have one: its figures unchecked, all clear (exit 0)", async () => {
    const { AWS_ENDPOINT_URL: _, ...rest } = env;
    const run = await recover(["status", "--prefix", PREFIX], {
      ...rest,
      AWS_ENDPOINT_URL_SQS: moto.endpoint,
      AWS_ENDPOINT_URL_STS: moto.endpoint,
    });
    expect(run.out).toContain(
      [
        "processor iterator age: n/a (no CloudWatch)",
        "alarms: n/a",
        `CloudWatch: n/a (no endpoint for CLOUDWATCH (AWS_ENDPOINT_URL_CLOUDWATCH) while SQS, STS are at ${moto.endpoint}): iterator age, alarms and source queue ages are not checked`,
        "all clear",
      ].join("\n"),
    );
    expect(run.code).toBe(0);
  });

  it("given one queue's URL and no prefix: the alarms and the iterator age are n/a for want of a name", async () => {
    const run = await recover(["status"], {
      ...env,
      TOOL_JOBS_QUEUE_URL: `${moto.endpoint}/${ACCOUNT}/${names.queues.tool_jobs.name}`,
    });
    expect(run.out).toMatch(new RegExp(`^ {2}${names.queues.tool_jobs.name}\\s+0\\s+0\\s+0\\s+-$`, "m"));
    expect(run.out).toContain(
      [
        "processor iterator age: n/a (no processor function name: pass --prefix or set STREAM_NAME)",
        "alarms: n/a (no name prefix: pass --prefix or set STREAM_NAME)",
        "attention:",
      ].join("\n"),
    );
    expect(run.code).toBe(4);
  });

  it("with no endpoint for STS while the others have one: the caller is unknown, the rest is read", async () => {
    const { AWS_ENDPOINT_URL: _, ...rest } = env;
    const others = Object.fromEntries(
      ["S3", "SQS", "KINESIS", "CLOUDWATCH", "DYNAMODB"].map((s) => [`AWS_ENDPOINT_URL_${s}`, moto.endpoint]),
    );
    const run = await recover(["status", "--prefix", PREFIX], { ...rest, ...others });
    expect(run.out.split("\n")[0]).toMatch(
      /^caller unknown \(cannot tell which account the credentials act in: no endpoint for STS \(AWS_ENDPOINT_URL_STS\) while .+\)$/,
    );
    expect(run.out).toContain(`alarms in ALARM: ${PREFIX}-processor-iterator-age`);
    expect(run.code).toBe(4);
  });
});

describe("triage and redrive by the names Terraform gives", () => {
  it("finds the bucket (named for the caller's account) and every DLQ from the prefix", async () => {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: (await createQueueWhenReady(sqs, { QueueName: names.queues.tool_jobs.dlqName })).url,
        MessageBody: "a job",
      }),
    );
    const run = await recover(["triage", "--prefix", PREFIX], env);
    expect(run.code).toBe(4);
    expect(run.out).toMatch(
      /tool-jobs DLQ\s+max-receives\s+retryable\s+1 .*\n\s+next: npm run recover -- redrive --queue tool-jobs/,
    );
    expect(run.out).not.toContain("not read:");
  });

  it("redrives with the mover where the endpoint has no StartMessageMoveTask, the source found by ListDeadLetterSourceQueues", async () => {
    const dlq = (await createQueueWhenReady(sqs, { QueueName: names.queues.tool_jobs.dlqName })).url;
    const source = (await createQueueWhenReady(sqs, { QueueName: names.queues.tool_jobs.name })).url;
    const dlqArn = `arn:aws:sqs:${REGION}:${ACCOUNT}:${names.queues.tool_jobs.dlqName}`;
    const run = await recover(["redrive", "--from", dlqArn, "--yes", "--watch", "0"], env);
    expect(run.out).toContain(
      "not checked move task: this endpoint has no message move tasks: the mover will move the messages",
    );
    expect(run.out).toContain(`     to arn:aws:sqs:${REGION}:${ACCOUNT}:${names.queues.tool_jobs.name}`);
    expect(run.out).toMatch(/^1 moved back to mcp-aws-tool-jobs \(mover\)/m);
    expect(run.code).toBe(0);
    expect(await countMessages(sqs, dlq)).toBe(0);
    expect(await countMessages(sqs, source)).toBe(1);
  });

  it("refuses a quarantine bucket of another region than the one it acts in (HeadBucket's answer)", async () => {
    const run = await recover(
      ["replay", "--prefix", PREFIX, "--bucket", `${PREFIX}-elsewhere-${ACCOUNT}`, "--dry-run"],
      env,
    );
    expect(run.code).toBe(3);
    expect(run.out).toContain(
      `REFUSED     bucket: region: ${PREFIX}-elsewhere-${ACCOUNT} is in region us-west-2; the command acts in ${REGION}`,
    );
  });
});

describe("pipelineStatus given less to go on (the library)", () => {
  it("says why each figure is missing, reads a DLQ's age from its messages, and pages on a source queue's age", async () => {
    const options = {
      endpoint: moto.endpoint,
      region: REGION,
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
    };
    const clients = { sqs, dynamodb: new DynamoDBClient(options), cloudwatch: new CloudWatchClient(options) };
    const urlOf = async (QueueName: string) =>
      (await sqs.send(new GetQueueUrlCommand({ QueueName }))).QueueUrl as string;
    const urls = async (key: (typeof QUEUE_KEYS)[number]) => ({
      sourceUrl: await urlOf(names.queues[key].name),
      dlqUrl: await urlOf(names.queues[key].dlqName),
    });
    const failures = {
      key: "stream_failures" as const,
      name: "stream-failures",
      fifo: false,
      ...(await urls("stream_failures")),
    };
    const tools = { key: "tool_jobs" as const, name: "tool-jobs", fifo: false, ...(await urls("tool_jobs")) };
    // Two messages in the DLQ and one in the source queue, none with a CloudWatch datapoint.
    for (const body of ["one", "two"])
      await sqs.send(new SendMessageCommand({ QueueUrl: failures.dlqUrl, MessageBody: body }));
    await sqs.send(new SendMessageCommand({ QueueUrl: failures.sourceUrl, MessageBody: "three" }));
    const now = Date.now();

    const report = await pipelineStatus(
      clients,
      { queues: [failures, tools] },
      { now, maxIteratorAgeSeconds: 60 },
    );
    const of = (name: string) => report.queues.find((q) => q.name === name);
    expect(of(names.queues.stream_failures.dlqName)?.oldest).toMatchObject({ from: "read" });
    expect(of(names.queues.stream_failures.name)?.oldest).toEqual({
      unavailable: "no datapoint in the last 10 minutes",
    });
    expect(report.stuckGroups).toEqual({ unavailable: "no FIFO queue found" });
    expect(report.iteratorAge).toEqual({
      unavailable: "no processor function name: pass --prefix or set STREAM_NAME",
    });
    expect(report.alarms).toEqual({ unavailable: "no name prefix: pass --prefix or set STREAM_NAME" });
    expect(report.attention).toContain(
      `2 messages wait in ${names.queues.stream_failures.dlqName} (the stream-failures DLQ)`,
    );
    // ApproximateAgeOfOldestMessage 150 s (beforeAll), over twice the 60 s visibility timeout.
    expect(report.attention).toContain(
      `the oldest job in ${names.queues.tool_jobs.name} waits 2 min 30 s, over 2 min 0 s (twice its visibility timeout)`,
    );

    const session = {
      key: "session_jobs" as const,
      name: "session-jobs",
      fifo: true,
      ...(await urls("session_jobs")),
    };
    const fifo = await pipelineStatus(clients, { queues: [session] }, { now, maxIteratorAgeSeconds: 60 });
    expect(fifo.stuckGroups).toEqual({
      unavailable: "no tool-calls table: set TOOL_CALLS_TABLE, or pass --table",
    });

    for (const url of [failures.dlqUrl, failures.sourceUrl])
      await sqs.send(new PurgeQueueCommand({ QueueUrl: url }));
    clients.dynamodb.destroy();
    clients.cloudwatch.destroy();
  });
});
