// Issue 14 item 9: the local stack is built from the same settings as Terraform and with the attributes
// terraform/modules declare. This test reads what local/runtime/src/pipeline/resources.ts created, through the APIs,
// and compares it to the environment's terraform.tfvars.json and to the modules.
import { join } from "node:path";
import { DescribeTableCommand, DescribeTimeToLiveCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DescribeStreamSummaryCommand, ListShardsCommand } from "@aws-sdk/client-kinesis";
import { HeadBucketCommand } from "@aws-sdk/client-s3";
import { GetQueueAttributesCommand, GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { type EmbeddedEmulators, emulatorClientOptions, startEmulators } from "@mcp-pipeline/emulators";
import {
  type EnvironmentSettings,
  FUNCTION_LOGGING,
  FUNCTION_TRACING_ACTIVE,
  loadSettings,
  QUEUE_ATTRIBUTES,
  QUEUE_KEYS,
  type ResourceNames,
  resourceNames,
} from "@mcp-pipeline/settings";
import { body, expression, type HclConfig, parseDirectory, TERRAFORM_ROOT } from "@mcp-pipeline/terraform";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createLocalResources,
  type LocalResources,
  queueRoles,
  type ResourceClients,
} from "../../src/pipeline/resources.js";

const ROOT = join(import.meta.dirname, "../../../..");
const ENVIRONMENTS = ["dev", "prod"] as const;

let emulators: EmbeddedEmulators;
let clients: ResourceClients;
let pipelineModule: HclConfig;
let queueModule: HclConfig;
let tableModule: HclConfig;
const stacks = new Map<
  string,
  { settings: EnvironmentSettings; names: ResourceNames; created: LocalResources }
>();

beforeAll(async () => {
  // Creation delays as on AWS (tables and streams CREATING, the stream UPDATING after a retention
  // change): the local stack must wait for ACTIVE before it configures or uses anything.
  emulators = await startEmulators({
    dynamodb: { createTableMs: 150 },
    kinesis: { createStreamMs: 150, updateStreamMs: 150 },
  });
  clients = {
    dynamodb: new DynamoDBClient(emulatorClientOptions(emulators.dynamodb)),
    kinesis: kinesisClient(emulatorClientOptions(emulators.kinesis)),
    sqs: sqsClient(emulatorClientOptions(emulators.sqsS3)),
    s3: s3Client(emulatorClientOptions(emulators.sqsS3)),
  };
  pipelineModule = await parseDirectory(join(TERRAFORM_ROOT, "modules", "pipeline"));
  queueModule = await parseDirectory(join(TERRAFORM_ROOT, "modules", "queue"));
  tableModule = await parseDirectory(join(TERRAFORM_ROOT, "modules", "table"));
  for (const environment of ENVIRONMENTS) {
    const settings = await loadSettings(ROOT, environment);
    const names = resourceNames(settings.name_prefix);
    stacks.set(environment, {
      settings,
      names,
      created: await createLocalResources(clients, settings, names),
    });
  }
}, 120_000);
afterAll(async () => {
  for (const client of Object.values(clients ?? {})) client.destroy();
  await emulators?.stop();
});

const stack = (environment: string) => {
  const found = stacks.get(environment);
  if (!found) throw new Error(`no local stack for ${environment}`);
  return found;
};

/** A pipeline module argument, `${...}` removed: `var.tool_worker.queue.max_receive_count`. */
const argument = (module: string, name: string) => {
  const block = body(pipelineModule, "module", module);
  if (!block) throw new Error(`terraform/modules/pipeline has no module "${module}"`);
  return block[name] === undefined ? undefined : expression(block[name]);
};

const queueResource = (name: "this" | "dlq") =>
  ((queueModule.resource as Record<string, Record<string, Record<string, unknown>[]>>).aws_sqs_queue?.[
    name
  ] ?? [])[0] ?? {};
/** The module's locals, merged. */
const localsOf = (module: HclConfig) =>
  Object.assign({}, ...((module.locals as Record<string, unknown>[] | undefined) ?? [])) as Record<
    string,
    unknown
  >;

async function attributes(queueName: string): Promise<Record<string, string>> {
  const { QueueUrl } = await clients.sqs.send(new GetQueueUrlCommand({ QueueName: queueName }));
  const { Attributes = {} } = await clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["All"] }),
  );
  return Attributes;
}

async function tableKeys(client: DynamoDBClient, tableName: string) {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  return {
    status: Table?.TableStatus,
    keys: Table?.KeySchema,
    billing: Table?.BillingModeSummary?.BillingMode,
  };
}

// Names (and which function consumes which queue) are checked against Terraform in
// packages/settings/test/unit/resource-names.test.ts.

describe.each(ENVIRONMENTS)(
  "the local %s stack matches its settings and terraform/modules",
  (environment) => {
    it.each(QUEUE_KEYS)("%s: retention, visibility, long polling, redrive and its DLQ", async (queue) => {
      const { settings, names, created } = stack(environment);
      const { name, dlqName, fifo, consumer } = names.queues[queue];
      const declared = settings[consumer].queue;
      const roles = queueRoles(queue);
      // The pipeline passes each consumer's settings to the module, which sets them on the queues.
      expect(argument("queue", "for_each")).toBe("local.queues");
      for (const attribute of [
        "visibility_timeout_seconds",
        "message_retention_seconds",
        "dlq_message_retention_seconds",
        "max_receive_count",
      ])
        expect(argument("queue", attribute)).toBe(`each.value.settings.${attribute}`);

      const source = await attributes(name);
      expect(source.VisibilityTimeout).toBe(String(declared.visibility_timeout_seconds));
      expect(source.MessageRetentionPeriod).toBe(String(declared.message_retention_seconds));
      // The module reads what it sets on every queue from attributes.json, as the local stack does.
      expect(expression(localsOf(queueModule).attributes)).toBe(
        `jsondecode(file("${"$"}{path.module}/attributes.json"))`,
      );
      expect(expression(queueResource("this").receive_wait_time_seconds)).toBe(
        "local.attributes.receive_wait_time_seconds",
      );
      expect(source.ReceiveMessageWaitTimeSeconds).toBe(String(QUEUE_ATTRIBUTES.receiveWaitTimeSeconds));
      expect(JSON.parse(source.RedrivePolicy ?? "{}")).toEqual({
        deadLetterTargetArn: created.queues[roles.dlq].arn,
        maxReceiveCount: declared.max_receive_count,
      });
      expect(source.QueueArn).toBe(created.queues[roles.source].arn);
      if (fifo) {
        expect(source.FifoQueue).toBe("true");
        expect(expression(queueResource("this").deduplication_scope)).toBe(
          "var.fifo ? local.attributes.fifo.deduplication_scope : null",
        );
        expect(expression(queueResource("this").fifo_throughput_limit)).toBe(
          "var.fifo ? local.attributes.fifo.fifo_throughput_limit : null",
        );
        expect(source.DeduplicationScope).toBe(QUEUE_ATTRIBUTES.fifo.deduplicationScope);
        expect(source.FifoThroughputLimit).toBe(QUEUE_ATTRIBUTES.fifo.fifoThroughputLimit);
      }

      const dlq = await attributes(dlqName);
      expect(dlq.MessageRetentionPeriod).toBe(String(declared.dlq_message_retention_seconds));
      expect(dlq.QueueArn).toBe(created.queues[roles.dlq].arn);
      if (fifo) expect(dlq.FifoQueue).toBe("true");
      expect(JSON.parse(dlq.RedriveAllowPolicy ?? "{}")).toEqual({
        redrivePermission: "byQueue",
        sourceQueueArns: [created.queues[roles.source].arn],
      });
    });

    it("tables: the keys and the TTL the modules declare (the dedupe table expires rows by expiresAt)", async () => {
      const { names } = stack(environment);
      const tableResource = ((
        tableModule.resource as Record<string, Record<string, Record<string, unknown>[]>>
      ).aws_dynamodb_table?.this ?? [])[0];
      expect(tableResource?.billing_mode).toBe("PAY_PER_REQUEST");

      for (const [module, tableName] of [
        ["tool_calls_table", names.toolCallsTable],
        ["dedupe_table", names.dedupeTable],
      ] as const) {
        const { status, keys, billing } = await tableKeys(clients.dynamodb, tableName);
        expect(status).toBe("ACTIVE");
        expect(billing).toBe("PAY_PER_REQUEST");
        expect(keys).toEqual([{ AttributeName: argument(module, "hash_key"), KeyType: "HASH" }]);
        const ttlAttribute = argument(module, "ttl_attribute");
        const { TimeToLiveDescription } = await clients.dynamodb.send(
          new DescribeTimeToLiveCommand({ TableName: tableName }),
        );
        expect(TimeToLiveDescription).toEqual(
          ttlAttribute === undefined
            ? { TimeToLiveStatus: "DISABLED" }
            : { TimeToLiveStatus: "ENABLED", AttributeName: ttlAttribute },
        );
      }
      expect(argument("dedupe_table", "ttl_attribute")).toBe("expiresAt");
    });

    it("the stream: its shard count and retention period", async () => {
      const { settings, names, created } = stack(environment);
      expect(argument("stream", "shard_count")).toBe("var.stream.shard_count");
      expect(argument("stream", "retention_period_hours")).toBe("var.stream.retention_period_hours");
      const { StreamDescriptionSummary } = await clients.kinesis.send(
        new DescribeStreamSummaryCommand({ StreamName: names.stream }),
      );
      expect(StreamDescriptionSummary?.StreamStatus).toBe("ACTIVE");
      expect(StreamDescriptionSummary?.StreamARN).toBe(created.streamArn);
      expect(StreamDescriptionSummary?.RetentionPeriodHours).toBe(settings.stream.retention_period_hours);
      const { Shards = [] } = await clients.kinesis.send(new ListShardsCommand({ StreamName: names.stream }));
      expect(Shards).toHaveLength(
        settings.stream.mode === "PROVISIONED"
          ? settings.stream.shard_count
          : Math.max(2, settings.stream.shard_count),
      );
    });

    it("the buckets exist", async () => {
      const { names } = stack(environment);
      for (const bucket of [names.quarantineBucket, names.resultsBucket]) {
        const head = await clients.s3.send(new HeadBucketCommand({ Bucket: bucket }));
        expect(head.$metadata.httpStatusCode).toBe(200);
      }
    });
  },
);

describe("the local functions' runtime settings come from terraform/modules/function", () => {
  let functionModule: HclConfig;
  beforeAll(async () => {
    functionModule = await parseDirectory(join(TERRAFORM_ROOT, "modules", "function"));
  });
  const lambda = () =>
    ((functionModule.resource as Record<string, Record<string, Record<string, unknown>[]>>)
      .aws_lambda_function?.this ?? [])[0] ?? {};

  it("the log format: the module reads logging.json, the local runtime sets AWS_LAMBDA_LOG_FORMAT from it", () => {
    const logging = (lambda().logging_config as Record<string, unknown>[] | undefined)?.[0] ?? {};
    expect(expression(logging.log_format)).toBe(
      `jsondecode(file("${"$"}{path.module}/logging.json")).log_format`,
    );
    // No application_log_level: Lambda's default for JSON, INFO, which the local runtime sets (§9.4).
    expect(logging.application_log_level).toBeUndefined();
    expect(FUNCTION_LOGGING).toEqual({ format: "JSON", applicationLogLevel: "INFO" });
  });

  it("active tracing (a literal in the module, for checkov): the local functions run traced as it says", () => {
    const tracing = (lambda().tracing_config as Record<string, unknown>[] | undefined)?.[0] ?? {};
    expect(FUNCTION_TRACING_ACTIVE).toBe(tracing.mode === "Active");
  });
});
