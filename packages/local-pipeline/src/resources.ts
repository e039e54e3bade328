/**
 * The resources of a local stack, created from the environment's settings (terraform.tfvars.json) with
 * the attributes that terraform/modules declare for them, so that what runs locally is what Terraform
 * deploys: queues with their retention, visibility timeout, long polling, redrive and redrive-allow
 * policies; tables with their keys and TTL; the stream with its shards and retention. Each resource is
 * used only once it is ACTIVE. packages/local-pipeline/test/local-stack-parity.test.ts reads them back through the APIs.
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
import { dedupeTableDefinition, dedupeTimeToLive } from "@mcp-pipeline/idempotency";
import type { EnvironmentSettings, QueueSettings } from "@mcp-pipeline/settings";
import { toolCallsTableDefinition } from "@mcp-pipeline/tool-calls";

export interface ResourceNames {
  readonly stream: string;
  readonly toolCallsTable: string;
  readonly dedupeTable: string;
  readonly quarantineBucket: string;
  readonly resultsBucket: string;
  readonly toolJobsQueue: string;
  readonly toolJobsDlq: string;
  readonly sessionJobsQueue: string;
  readonly sessionJobsDlq: string;
  readonly streamFailuresQueue: string;
  readonly streamFailuresDlq: string;
}

/** Names derived from the environment's prefix, as the Terraform modules name them. */
export function resourceNames(prefix: string): ResourceNames {
  return {
    stream: `${prefix}-events`,
    toolCallsTable: `${prefix}-tool-calls`,
    dedupeTable: `${prefix}-dedupe`,
    quarantineBucket: `${prefix}-quarantine`,
    resultsBucket: `${prefix}-results`,
    toolJobsQueue: `${prefix}-tool-jobs`,
    toolJobsDlq: `${prefix}-tool-jobs-dlq`,
    sessionJobsQueue: `${prefix}-session-jobs.fifo`,
    sessionJobsDlq: `${prefix}-session-jobs-dlq.fifo`,
    streamFailuresQueue: `${prefix}-stream-failures`,
    streamFailuresDlq: `${prefix}-stream-failures-dlq`,
  };
}

export interface QueueHandle {
  readonly url: string;
  readonly arn: string;
}

export type QueueRole =
  | "toolJobs"
  | "toolJobsDlq"
  | "sessionJobs"
  | "sessionJobsDlq"
  | "streamFailures"
  | "streamFailuresDlq";

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

/** terraform/modules/queue: `receive_wait_time_seconds = 20` on the source queue (long polling). */
export const SOURCE_QUEUE_RECEIVE_WAIT_SECONDS = 20;
/** Kinesis keeps records 24 h unless the retention is increased (terraform/modules/stream). */
const DEFAULT_STREAM_RETENTION_HOURS = 24;

/**
 * The attributes terraform/modules/queue gives a source queue and its DLQ. `timeScale` divides the
 * visibility timeout (a local run compresses time); retention is kept as declared.
 */
export function queueAttributes(settings: QueueSettings, fifo: boolean, timeScale = 1) {
  const fifoSource = fifo
    ? { FifoQueue: "true", DeduplicationScope: "messageGroup", FifoThroughputLimit: "perMessageGroupId" }
    : {};
  return {
    source: {
      ...fifoSource,
      VisibilityTimeout: String(Math.max(1, Math.round(settings.visibility_timeout_seconds / timeScale))),
      MessageRetentionPeriod: String(settings.message_retention_seconds),
      ReceiveMessageWaitTimeSeconds: String(SOURCE_QUEUE_RECEIVE_WAIT_SECONDS),
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
  name: string,
  dlqName: string,
  settings: QueueSettings,
  timeScale: number,
): Promise<{ source: QueueHandle; dlq: QueueHandle }> {
  const attributes = queueAttributes(settings, name.endsWith(".fifo"), timeScale);
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
  const { StreamDescriptionSummary } = await kinesis.send(
    new DescribeStreamSummaryCommand({ StreamName: names.stream }),
  );

  await createTableWhenActive(dynamodb, toolCallsTableDefinition(names.toolCallsTable));
  await createTableWhenActive(dynamodb, dedupeTableDefinition(names.dedupeTable));
  await dynamodb.send(new UpdateTimeToLiveCommand(dedupeTimeToLive(names.dedupeTable)));
  await createBucketWhenReady(s3, { Bucket: names.quarantineBucket });
  await createBucketWhenReady(s3, { Bucket: names.resultsBucket });

  const toolJobs = await queuePair(
    sqs,
    names.toolJobsQueue,
    names.toolJobsDlq,
    settings.tool_worker.queue,
    timeScale,
  );
  const sessionJobs = await queuePair(
    sqs,
    names.sessionJobsQueue,
    names.sessionJobsDlq,
    settings.fifo_worker.queue,
    timeScale,
  );
  const streamFailures = await queuePair(
    sqs,
    names.streamFailuresQueue,
    names.streamFailuresDlq,
    settings.dlq_redrive.queue,
    timeScale,
  );
  return {
    streamArn: StreamDescriptionSummary?.StreamARN ?? "",
    queues: {
      toolJobs: toolJobs.source,
      toolJobsDlq: toolJobs.dlq,
      sessionJobs: sessionJobs.source,
      sessionJobsDlq: sessionJobs.dlq,
      streamFailures: streamFailures.source,
      streamFailuresDlq: streamFailures.dlq,
    },
  };
}
