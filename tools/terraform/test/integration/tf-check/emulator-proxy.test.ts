// The proxy that tf:check puts in front of moto's server: each gap it bridges is shown first as moto's own
// answer (so the test notices when a moto release closes it), then as the answer through the proxy.
// Integration: moto's server on 127.0.0.1 (installed by .ci/moto.sh).
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { CreateRoleCommand, IAMClient } from "@aws-sdk/client-iam";
import {
  CreateStreamCommand,
  DeregisterStreamConsumerCommand,
  DescribeStreamSummaryCommand,
  KinesisClient,
  ListTagsForResourceCommand,
  ListTagsForStreamCommand,
  RegisterStreamConsumerCommand,
  TagResourceCommand,
  UntagResourceCommand,
} from "@aws-sdk/client-kinesis";
import {
  CreateEventSourceMappingCommand,
  CreateFunctionCommand,
  DeleteFunctionCommand,
  GetEventSourceMappingCommand,
  GetFunctionConfigurationCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
} from "@aws-sdk/client-lambda";
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  SetQueueAttributesCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { cbor } from "@smithy/core/cbor";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alarmTopicFindings } from "../../../src/tf-check/assertions.ts";
import { type EmulatorProxy, startEmulatorProxy } from "../../../src/tf-check/emulator-proxy.ts";
import { type Moto, startMoto } from "../../../src/tf-check/moto.ts";

const region = "eu-west-1";
const credentials = { accessKeyId: "test", secretAccessKey: "test" };
let moto: Moto;
let proxy: EmulatorProxy;

beforeAll(async () => {
  // .ci/moto.sh installs moto's server on first use (about 45 s), then only prints its path.
  const server = execFileSync("bash", [join(import.meta.dirname, "../../../../../.ci/moto.sh")], {
    encoding: "utf8",
  })
    .trim()
    .split("\n")
    .pop() as string;
  moto = await startMoto(server);
  proxy = await startEmulatorProxy(moto.endpoint);
}, 300_000);

afterAll(async () => {
  await proxy?.close();
  await moto?.stop();
});

/** A CloudWatch call as the Go SDK in the hashicorp/aws provider makes it: Smithy RPC v2 CBOR. */
async function cloudWatchCbor(endpoint: string, operation: string, input: Record<string, unknown>) {
  const res = await fetch(`${endpoint}/service/GraniteServiceVersion20100801/operation/${operation}`, {
    method: "POST",
    headers: {
      "content-type": "application/cbor",
      accept: "application/cbor",
      "smithy-protocol": "rpc-v2-cbor",
      // moto reads the service and region from the credential scope.
      authorization: `AWS4-HMAC-SHA256 Credential=test/20260101/${region}/monitoring/aws4_request, SignedHeaders=host, Signature=0`,
    },
    body: Buffer.from(cbor.serialize(input)),
  });
  const body = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, body };
}

describe("CloudWatch over RPC v2 CBOR", () => {
  const alarm = {
    AlarmName: "mcp-test-errors",
    Namespace: "AWS/Lambda",
    MetricName: "Errors",
    Statistic: "Sum",
    Period: 300,
    EvaluationPeriods: 1,
    Threshold: 0,
    ComparisonOperator: "GreaterThanThreshold",
    Dimensions: [{ Name: "FunctionName", Value: "mcp-test-processor" }],
  };

  it("moto alone does not answer it", async () => {
    const direct = await cloudWatchCbor(moto.endpoint, "PutMetricAlarm", alarm);
    expect(direct.status).toBeGreaterThanOrEqual(400);
  });

  it("through the proxy: the alarm is stored and read back in CBOR, timestamps as tag 1", async () => {
    const put = await cloudWatchCbor(proxy.endpoint, "PutMetricAlarm", alarm);
    expect(put.status).toBe(200);
    expect(put.headers.get("smithy-protocol")).toBe("rpc-v2-cbor");

    const described = await cloudWatchCbor(proxy.endpoint, "DescribeAlarms", {
      AlarmNames: [alarm.AlarmName],
    });
    expect(described.status).toBe(200);
    const output = cbor.deserialize(described.body) as {
      MetricAlarms: {
        AlarmName: string;
        Threshold: number;
        Dimensions: unknown[];
        StateUpdatedTimestamp: unknown;
      }[];
    };
    expect(output.MetricAlarms).toHaveLength(1);
    expect(output.MetricAlarms[0]).toMatchObject({
      AlarmName: alarm.AlarmName,
      Threshold: 0,
      Dimensions: alarm.Dimensions,
    });
    // A timestamp member arrives as CBOR tag 1 (epoch seconds), which the SDKs require.
    expect(output.MetricAlarms[0]?.StateUpdatedTimestamp).toMatchObject({ tag: 1 });
  });

  it("an error keeps its code for the SDK to read", async () => {
    const missing = await cloudWatchCbor(proxy.endpoint, "GetDashboard", { DashboardName: "mcp-test-none" });
    expect(missing.status).toBe(404);
    expect(cbor.deserialize(missing.body)).toMatchObject({ __type: "ResourceNotFound" });
  });
});

describe("SQS RedriveAllowPolicy", () => {
  const policy = JSON.stringify({
    redrivePermission: "byQueue",
    sourceQueueArns: ["arn:aws:sqs:eu-west-1:123456789012:jobs"],
  });

  it("moto stores it without returning it; through the proxy GetQueueAttributes returns what was set", async () => {
    const direct = new SQSClient({ region, credentials, endpoint: moto.endpoint });
    const viaProxy = new SQSClient({ region, credentials, endpoint: proxy.endpoint });
    const { QueueUrl } = await viaProxy.send(new CreateQueueCommand({ QueueName: "jobs-dlq" }));
    await viaProxy.send(
      new SetQueueAttributesCommand({ QueueUrl, Attributes: { RedriveAllowPolicy: policy } }),
    );

    const fromMoto = await direct.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["All"] }));
    expect(fromMoto.Attributes?.RedriveAllowPolicy).toBeUndefined();
    const fromProxy = await viaProxy.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["RedriveAllowPolicy"] }),
    );
    expect(fromProxy.Attributes?.RedriveAllowPolicy).toBe(policy);
    direct.destroy();
    viaProxy.destroy();
  });
});

describe("a Lambda ESM on an enhanced fan-out consumer", () => {
  it("moto refuses the consumer ARN; through the proxy the mapping reads the stream and reports the consumer", async () => {
    const config = { region, credentials };
    const iam = new IAMClient({ ...config, endpoint: moto.endpoint });
    // Kinesis clients default to HTTP/2, which moto's server does not speak.
    const kinesis = new KinesisClient({
      ...config,
      endpoint: moto.endpoint,
      requestHandler: new NodeHttpHandler(),
    });
    const direct = new LambdaClient({ ...config, endpoint: moto.endpoint });
    const viaProxy = new LambdaClient({ ...config, endpoint: proxy.endpoint });

    const role = await iam.send(
      new CreateRoleCommand({
        RoleName: "efo-test",
        AssumeRolePolicyDocument: JSON.stringify({ Version: "2012-10-17", Statement: [] }),
      }),
    );
    const fn = await direct.send(
      new CreateFunctionCommand({
        FunctionName: "efo-test",
        Role: role.Role?.Arn,
        Runtime: "nodejs22.x",
        Handler: "index.handler",
        // An empty zip archive (end-of-central-directory record only): moto stores code, it never runs here.
        Code: { ZipFile: Buffer.from([0x50, 0x4b, 0x05, 0x06, ...new Array(18).fill(0)]) },
      }),
    );
    await kinesis.send(new CreateStreamCommand({ StreamName: "efo-test", ShardCount: 1 }));
    const stream = await kinesis.send(new DescribeStreamSummaryCommand({ StreamName: "efo-test" }));
    const streamArn = stream.StreamDescriptionSummary?.StreamARN as string;
    const consumer = await kinesis.send(
      new RegisterStreamConsumerCommand({ StreamARN: streamArn, ConsumerName: "efo-test" }),
    );
    const consumerArn = consumer.Consumer?.ConsumerARN as string;
    const input = {
      FunctionName: fn.FunctionArn,
      EventSourceArn: consumerArn,
      StartingPosition: "TRIM_HORIZON" as const,
    };

    await expect(direct.send(new CreateEventSourceMappingCommand(input))).rejects.toThrow();
    const created = await viaProxy.send(new CreateEventSourceMappingCommand(input));
    expect(created.EventSourceArn).toBe(consumerArn);
    const read = await viaProxy.send(new GetEventSourceMappingCommand({ UUID: created.UUID }));
    expect(read.EventSourceArn).toBe(consumerArn);
    const listed = await viaProxy.send(new ListEventSourceMappingsCommand({ FunctionName: fn.FunctionArn }));
    expect(listed.EventSourceMappings?.map((m) => m.EventSourceArn)).toEqual([consumerArn]);
    // What moto holds: the mapping on the consumer's stream.
    const held = await direct.send(new GetEventSourceMappingCommand({ UUID: created.UUID }));
    expect(held.EventSourceArn).toBe(streamArn);
    for (const c of [iam, kinesis, direct, viaProxy]) c.destroy();
  });
});

describe("Kinesis tags on an enhanced fan-out consumer (hashicorp/aws 6.x reads them by ARN)", () => {
  // Kinesis clients default to HTTP/2, which moto's server does not speak; no retries, so that moto's
  // HTTP 500 shows at once (the provider's SDK retries it 25 times, again and again).
  const kinesisAt = (endpoint: string) =>
    new KinesisClient({
      region,
      credentials,
      endpoint,
      requestHandler: new NodeHttpHandler(),
      maxAttempts: 1,
    });

  it("moto answers HTTP 500; through the proxy the consumer keeps the tags it was registered and tagged with", async () => {
    const direct = kinesisAt(moto.endpoint);
    const viaProxy = kinesisAt(proxy.endpoint);
    await direct.send(new CreateStreamCommand({ StreamName: "tags-test", ShardCount: 1 }));
    const stream = await direct.send(new DescribeStreamSummaryCommand({ StreamName: "tags-test" }));
    const streamArn = stream.StreamDescriptionSummary?.StreamARN as string;
    const registered = await viaProxy.send(
      new RegisterStreamConsumerCommand({
        StreamARN: streamArn,
        ConsumerName: "tags-test",
        Tags: { environment: "prod", owner: "pipelines" },
      }),
    );
    const ResourceARN = registered.Consumer?.ConsumerARN as string;

    const fromMoto = direct.send(new ListTagsForResourceCommand({ ResourceARN }));
    await expect(fromMoto).rejects.toMatchObject({ $metadata: { httpStatusCode: 500 } });

    const listed = await viaProxy.send(new ListTagsForResourceCommand({ ResourceARN }));
    expect(listed.Tags).toEqual([
      { Key: "environment", Value: "prod" },
      { Key: "owner", Value: "pipelines" },
    ]);
    await viaProxy.send(new TagResourceCommand({ ResourceARN, Tags: { cost: "shared" } }));
    await viaProxy.send(new UntagResourceCommand({ ResourceARN, TagKeys: ["owner"] }));
    const changed = await viaProxy.send(new ListTagsForResourceCommand({ ResourceARN }));
    expect(changed.Tags).toEqual([
      { Key: "environment", Value: "prod" },
      { Key: "cost", Value: "shared" },
    ]);

    // A consumer moto does not hold (deregistered): moto's own not-found error, as AWS answers.
    await viaProxy.send(new DeregisterStreamConsumerCommand({ ConsumerARN: ResourceARN }));
    await expect(viaProxy.send(new ListTagsForResourceCommand({ ResourceARN }))).rejects.toMatchObject({
      name: "ResourceNotFoundException",
    });
    direct.destroy();
    viaProxy.destroy();
  });
});

describe("SQS RedriveAllowPolicy forgotten, RedrivePolicy compact", () => {
  const policy = JSON.stringify({ redrivePermission: "allowAll" });

  it("an empty policy or a deleted queue leaves nothing for the proxy to add", async () => {
    const viaProxy = new SQSClient({ region, credentials, endpoint: proxy.endpoint });
    const allow = async (QueueUrl: string | undefined) =>
      (await viaProxy.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["All"] }))).Attributes
        ?.RedriveAllowPolicy;
    const first = await viaProxy.send(
      new CreateQueueCommand({ QueueName: "forget-dlq", Attributes: { RedriveAllowPolicy: policy } }),
    );
    expect(await allow(first.QueueUrl)).toBe(policy);
    await viaProxy.send(
      new SetQueueAttributesCommand({ QueueUrl: first.QueueUrl, Attributes: { RedriveAllowPolicy: "" } }),
    );
    expect(await allow(first.QueueUrl)).toBeUndefined();

    await viaProxy.send(
      new SetQueueAttributesCommand({ QueueUrl: first.QueueUrl, Attributes: { RedriveAllowPolicy: policy } }),
    );
    await viaProxy.send(new DeleteQueueCommand({ QueueUrl: first.QueueUrl }));
    const again = await viaProxy.send(new CreateQueueCommand({ QueueName: "forget-dlq" }));
    expect(await allow(again.QueueUrl)).toBeUndefined();
    viaProxy.destroy();
  });

  it("moto spells RedrivePolicy with spaces; through the proxy it is compact, as AWS answers it", async () => {
    const direct = new SQSClient({ region, credentials, endpoint: moto.endpoint });
    const viaProxy = new SQSClient({ region, credentials, endpoint: proxy.endpoint });
    const dlq = await direct.send(new CreateQueueCommand({ QueueName: "compact-dlq" }));
    const dlqArn = (
      await direct.send(
        new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ["QueueArn"] }),
      )
    ).Attributes?.QueueArn;
    const compact = JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 5 });
    const { QueueUrl } = await direct.send(
      new CreateQueueCommand({ QueueName: "compact", Attributes: { RedrivePolicy: compact } }),
    );
    const read = async (client: SQSClient) =>
      (await client.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["RedrivePolicy"] })))
        .Attributes?.RedrivePolicy;
    expect(await read(direct)).not.toBe(compact);
    expect(await read(viaProxy)).toBe(compact);
    expect(proxy.events).toContainEqual({ kind: "redrive-policy-compacted", queue: "compact" });
    direct.destroy();
    viaProxy.destroy();
  });
});

describe("Kinesis CreateStream's Tags", () => {
  const kinesisAt = (endpoint: string) =>
    new KinesisClient({ region, credentials, endpoint, requestHandler: new NodeHttpHandler() });

  it("moto ignores them; through the proxy the stream is created with them", async () => {
    const direct = kinesisAt(moto.endpoint);
    const viaProxy = kinesisAt(proxy.endpoint);
    const Tags = { environment: "prod" };
    const tagsOf = async (StreamName: string) =>
      (await direct.send(new ListTagsForStreamCommand({ StreamName }))).Tags ?? [];
    await direct.send(new CreateStreamCommand({ StreamName: "tagged-direct", ShardCount: 1, Tags }));
    expect(await tagsOf("tagged-direct")).toEqual([]);
    await viaProxy.send(new CreateStreamCommand({ StreamName: "tagged-proxy", ShardCount: 1, Tags }));
    expect(await tagsOf("tagged-proxy")).toEqual([{ Key: "environment", Value: "prod" }]);
    expect(proxy.events).toContainEqual({ kind: "stream-tags-added", stream: "tagged-proxy" });
    direct.destroy();
    viaProxy.destroy();
  });
});

describe("S3 CreateBucket with Tags in its CreateBucketConfiguration", () => {
  it("through the proxy: UnsupportedArgument, so that the provider tags the bucket afterwards", async () => {
    const res = await fetch(`${proxy.endpoint}/tagged-bucket`, {
      method: "PUT",
      headers: { "content-type": "application/xml" },
      body: "<CreateBucketConfiguration><Tags><Tag><Key>a</Key><Value>b</Value></Tag></Tags></CreateBucketConfiguration>",
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("<Code>UnsupportedArgument</Code>");
    expect(proxy.events).toContainEqual({ kind: "bucket-tags-on-create-refused", bucket: "tagged-bucket" });
    // Nothing reached moto: the bucket does not exist.
    expect((await fetch(`${moto.endpoint}/tagged-bucket`, { method: "HEAD" })).status).toBe(404);
  });
});

describe("Lambda LoggingConfig", () => {
  it("moto drops it; through the proxy the function's configuration keeps it, until the function is deleted", async () => {
    const config = { region, credentials };
    const iam = new IAMClient({ ...config, endpoint: moto.endpoint });
    const direct = new LambdaClient({ ...config, endpoint: moto.endpoint });
    const viaProxy = new LambdaClient({ ...config, endpoint: proxy.endpoint });
    const role = await iam.send(
      new CreateRoleCommand({
        RoleName: "logging-test",
        AssumeRolePolicyDocument: JSON.stringify({ Version: "2012-10-17", Statement: [] }),
      }),
    );
    const create = {
      FunctionName: "logging-test",
      Role: role.Role?.Arn,
      Runtime: "nodejs22.x" as const,
      Handler: "index.handler",
      // An empty zip archive (end-of-central-directory record only): moto stores code, it never runs here.
      Code: { ZipFile: Buffer.from([0x50, 0x4b, 0x05, 0x06, ...new Array(18).fill(0)]) },
    };
    const LoggingConfig = { LogFormat: "JSON" as const, ApplicationLogLevel: "INFO" as const };
    const created = await viaProxy.send(new CreateFunctionCommand({ ...create, LoggingConfig }));
    expect(created.LoggingConfig).toMatchObject(LoggingConfig);
    const read = (client: LambdaClient) =>
      client.send(new GetFunctionConfigurationCommand({ FunctionName: "logging-test" }));
    expect((await read(direct)).LoggingConfig?.ApplicationLogLevel).toBeUndefined();
    expect((await read(viaProxy)).LoggingConfig).toMatchObject(LoggingConfig);
    expect(proxy.events).toContainEqual({ kind: "lambda-logging-config-returned", function: "logging-test" });

    await viaProxy.send(new DeleteFunctionCommand({ FunctionName: "logging-test" }));
    await viaProxy.send(new CreateFunctionCommand(create));
    expect((await read(viaProxy)).LoggingConfig?.ApplicationLogLevel).toBeUndefined();
    for (const c of [iam, direct, viaProxy]) c.destroy();
  });
});

describe("the alarm topic's key (the check's rule)", () => {
  const cloudWatchMayUse = JSON.stringify({
    Statement: [
      {
        Effect: "Allow",
        Principal: { Service: "cloudwatch.amazonaws.com" },
        Action: ["kms:Decrypt", "kms:GenerateDataKey*"],
      },
    ],
  });

  it("refuses the AWS-managed alias/aws/sns key, by alias or by alias ARN", () => {
    expect(alarmTopicFindings("alias/aws/sns", undefined)[0]).toMatch(/alias\/aws\/sns.*never be delivered/);
    expect(alarmTopicFindings("arn:aws:kms:eu-west-1:123456789012:alias/aws/sns", undefined)).toHaveLength(1);
  });

  it("refuses an unencrypted topic and a key whose policy leaves CloudWatch out", () => {
    expect(alarmTopicFindings(undefined, undefined)).toEqual(["alarm topic: not encrypted"]);
    const adminOnly = JSON.stringify({
      Statement: [{ Effect: "Allow", Principal: { AWS: "arn:aws:iam::123456789012:root" }, Action: "kms:*" }],
    });
    expect(alarmTopicFindings("arn:aws:kms:eu-west-1:123456789012:key/k", adminOnly)[0]).toMatch(
      /does not allow cloudwatch/,
    );
  });

  it("accepts a customer-managed key that lets CloudWatch decrypt and generate data keys", () => {
    expect(alarmTopicFindings("arn:aws:kms:eu-west-1:123456789012:key/k", cloudWatchMayUse)).toEqual([]);
  });
});
