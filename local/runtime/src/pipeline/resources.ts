/**
 * The resources of a local stack, created from the environment's settings (terraform.tfvars.json) with
 * the attributes that terraform/modules declare for them, so that what runs locally is what Terraform
 * deploys: queues with their retention, visibility timeout, long polling, redrive and redrive-allow
 * policies; tables with their keys and TTL; the stream with its shards and retention. Each resource is
 * used only once it is ACTIVE. local/runtime/test/integration/local-stack-parity.test.ts reads them back through the APIs.
 */
import { type DynamoDBClient, UpdateTimeToLiveCommand } from "@aws-sdk/client-dynamodb";
import {
  DescribeStreamSummaryCommand,
  IncreaseStreamRetentionPeriodCommand,
  type KinesisClient,
} from "@aws-sdk/client-kinesis";
import type { S3Client } from "@aws-sdk/client-s3";
import { SetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import {
  createBucketWhenReady,
  createQueueWhenReady,
  createStreamWhenActive,
  createTableWhenActive,
  waitForStreamActive,
} from "@mcp-pipeline/emulators";
import {
  type EnvironmentSettings,
  QUEUE_ATTRIBUTES,
  QUEUE_KEYS,
  type QueueKey,
  type QueueNames,
  type QueueSettings,
  type ResourceNames,
} from "@mcp-pipeline/settings";
import { toolCallsTableDefinition } from "@mcp-pipeline/tool-calls";
import { dedupeTableDefinition, dedupeTimeToLive } from "@mcp-pipeline/tool-calls/idempotency";

export interface QueueHandle {
  readonly url: string;
  readonly arn: string;
}

/** A queue's handle in TypeScript: `session_jobs` -> `sessionJobs`, its DLQ `sessionJobsDlq`. */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;
export type QueueRole = CamelCase<QueueKey> | `${CamelCase<QueueKey>}Dlq`;
const camelCase = <S extends string>(key: S) =>
  key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()) as CamelCase<S>;
/** A queue's handles in `LocalResources.queues`: `session_jobs` -> sessionJobs and sessionJobsDlq. */
export const queueRoles = (key: QueueKey): { readonly source: QueueRole; readonly dlq: QueueRole } => ({
  source: camelCase(key),
  dlq: `${camelCase(key)}Dlq`,
});

export interface LocalResources {
  readonly streamArn: string;
  readonly queues: Record<QueueRole, QueueHandle>;
}

export interface ResourceClients {
  readonly kinesis: KinesisClient;
  readonly sqs: SQSClient;
  readonly s3: S3Client;
  readonly dynamodb: DynamoDBClient;
}

/** Kinesis keeps records 24 h unless the retention is increased (AWS's default for a new stream). */
const DEFAULT_STREAM_RETENTION_HOURS = 24;

/**
 * The attributes terraform/modules/queue gives a source queue and its DLQ: the environment's settings and
 * what the module declares for every queue (QUEUE_ATTRIBUTES, read from the file the module reads).
 * `timeScale` divides the visibility timeout (a local run compresses time); retention is kept as declared.
 */
export function queueAttributes(settings: QueueSettings, fifo: boolean, timeScale = 1) {
  const fifoSource = fifo
    ? {
        FifoQueue: "true",
        DeduplicationScope: QUEUE_ATTRIBUTES.fifo.deduplicationScope,
        FifoThroughputLimit: QUEUE_ATTRIBUTES.fifo.fifoThroughputLimit,
      }
    : {};
  return {
    source: {
      ...fifoSource,
      VisibilityTimeout: String(Math.max(1, Math.round(settings.visibility_timeout_seconds / timeScale))),
      MessageRetentionPeriod: String(settings.message_retention_seconds),
      ReceiveMessageWaitTimeSeconds: String(QUEUE_ATTRIBUTES.receiveWaitTimeSeconds),
    },
    dlq: {
      ...(fifo ? { FifoQueue: "true" } : {}),
      MessageRetentionPeriod: String(settings.dlq_message_retention_seconds),
    },
  };
}

/** A source queue and its DLQ, with the redrive policy and the DLQ's redrive-allow policy. */
async function queuePair(
  sqs: SQSClient,
  { name, dlqName, fifo }: QueueNames,
  settings: QueueSettings,
  timeScale: number,
): Promise<{ source: QueueHandle; dlq: QueueHandle }> {
  const attributes = queueAttributes(settings, fifo, timeScale);
  const dlq = await createQueueWhenReady(sqs, { QueueName: dlqName, Attributes: attributes.dlq });
  const source = await createQueueWhenReady(sqs, {
    QueueName: name,
    Attributes: {
      ...attributes.source,
      RedrivePolicy: JSON.stringify({
        deadLetterTargetArn: dlq.arn,
        maxReceiveCount: settings.max_receive_count,
      }),
    },
  });
  // Only this queue may use the DLQ, so a redrive can only go back here (terraform/modules/queue).
  await sqs.send(
    new SetQueueAttributesCommand({
      QueueUrl: dlq.url,
      Attributes: {
        RedriveAllowPolicy: JSON.stringify({ redrivePermission: "byQueue", sourceQueueArns: [source.arn] }),
      },
    }),
  );
  return { source: { url: source.url, arn: source.arn }, dlq: { url: dlq.url, arn: dlq.arn } };
}

/** Creates every resource of the environment and returns once each is usable. */
export async function createLocalResources(
  clients: ResourceClients,
  settings: EnvironmentSettings,
  names: ResourceNames,
  timeScale = 1,
): Promise<LocalResources> {
  const { kinesis, sqs, s3, dynamodb } = clients;
  // ON_DEMAND has no shard count to declare; locally it gets at least two shards so order per key
  // across shards is exercised.
  const shardCount =
    settings.stream.mode === "PROVISIONED"
      ? settings.stream.shard_count
      : Math.max(2, settings.stream.shard_count);
  const stream = async () => {
    await createStreamWhenActive(kinesis, { StreamName: names.stream, ShardCount: shardCount });
    if (settings.stream.retention_period_hours > DEFAULT_STREAM_RETENTION_HOURS) {
      await kinesis.send(
        new IncreaseStreamRetentionPeriodCommand({
          StreamName: names.stream,
          RetentionPeriodHours: settings.stream.retention_period_hours,
        }),
      );
      await waitForStreamActive(kinesis, names.stream);
    }
    return kinesis.send(new DescribeStreamSummaryCommand({ StreamName: names.stream }));
  };
  const tables = async () => {
    await createTableWhenActive(dynamodb, toolCallsTableDefinition(names.toolCallsTable));
    await createTableWhenActive(dynamodb, dedupeTableDefinition(names.dedupeTable));
    await dynamodb.send(new UpdateTimeToLiveCommand(dedupeTimeToLive(names.dedupeTable)));
  };
  const buckets = () =>
    Promise.all(
      [names.quarantineBucket, names.resultsBucket].map((Bucket) => createBucketWhenReady(s3, { Bucket })),
    );
  const queuePairs = () =>
    Promise.all(
      QUEUE_KEYS.map(async (key) => {
        const pair = await queuePair(
          sqs,
          names.queues[key],
          settings[names.queues[key].consumer].queue,
          timeScale,
        );
        return [key, pair] as const;
      }),
    );
  // Each resource waits for its own readiness; none depends on another, so they are created at once
  // (the emulators answer in milliseconds, the round trips were what a serial creation waited on).
  const [{ StreamDescriptionSummary }, , , pairs] = await Promise.all([
    stream(),
    tables(),
    buckets(),
    queuePairs(),
  ]);

  const queues = {} as Record<QueueRole, QueueHandle>;
  for (const [key, pair] of pairs) {
    const roles = queueRoles(key);
    queues[roles.source] = pair.source;
    queues[roles.dlq] = pair.dlq;
  }
  return {
    streamArn: StreamDescriptionSummary?.StreamARN ?? "",
    queues,
  };
}
