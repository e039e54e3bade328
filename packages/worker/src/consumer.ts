import type { ConfigSchema } from "@mcp-pipeline/aws";
import { dynamoDbDocumentClient, lazyS3Client, putAllRecords, sdkRetryBases } from "@mcp-pipeline/aws";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { type Consumer, type MetricValues, sqsRecords } from "@mcp-pipeline/batch/consumer-shell";
import { encodeLifecycleEventRecord, messageIdOf } from "@mcp-pipeline/contracts";
import { ToolCallStore } from "@mcp-pipeline/tool-calls";
import { IdempotencyStore } from "@mcp-pipeline/tool-calls/idempotency";
import type { SQSRecord } from "aws-lambda";
import type { WorkerConfig } from "./config.js";
import { lazyDeadLetterQueue } from "./dead-letter-queue.js";
import { processToolCallJobs, type WorkerSummary } from "./process-jobs.js";
import type { QueueMode } from "./queue-mode.js";
import { lazyChangeVisibility } from "./redelivery.js";
import { placeResult } from "./result-store.js";
import type { WorkerDeps } from "./worker-deps.js";

export interface WorkerOptions<C extends WorkerConfig> {
  /** Powertools service name and metric dimension, e.g. `tool-worker`; also the idempotency scope. */
  readonly service: string;
  readonly mode: QueueMode;
  /** The function's environment: the worker's settings and those of the tools it runs. */
  readonly config: ConfigSchema<C>;
  /** The tools this worker runs, built from its configuration: the function chooses its catalogue. */
  readonly registry: (config: C) => WorkerDeps["registry"];
}

/** A worker's metrics: what became of each job, and how long the batch took. */
export function workerMetrics(summary: WorkerSummary): MetricValues {
  return {
    Jobs: ["Count", summary.messages],
    Succeeded: ["Count", summary.succeeded],
    FailedPermanently: ["Count", summary.failedPermanently],
    DeadLettered: ["Count", summary.deadLettered],
    Duplicates: ["Count", summary.duplicates],
    Retried: ["Count", summary.retried],
    LeavingForDlq: ["Count", summary.leavingForDlq],
    BackedOff: ["Count", summary.backedOff],
    BatchDuration: ["Milliseconds", summary.durationMs],
  };
}

/**
 * A worker Lambda, for the consumer shell (@mcp-pipeline/batch/consumer-shell): its clients and stores wired
 * from the configuration, its tools from the function's registry, and processToolCallJobs as its core.
 */
export function workerConsumer<C extends WorkerConfig>(
  options: WorkerOptions<C>,
): Consumer<C, WorkerDeps, SQSRecord, WorkerSummary> {
  return {
    service: options.service,
    config: options.config,
    records: sqsRecords,
    process: processToolCallJobs,
    report: { failure: "job reported for retry", summary: "batch processed", metrics: workerMetrics },
    wire: (config, { logger }) => {
      // Every client backs off with the function's declared bases (SDK_RETRY_BASE_MS, ...).
      const clientOptions = { retryBases: sdkRetryBases(config) };
      const dynamo = dynamoDbDocumentClient(clientOptions);
      // Only a result over the inline limit needs S3: the client loads then, not at cold start.
      const s3 = lazyS3Client(clientOptions, process.env);
      const kinesis = kinesisClient(clientOptions);
      // Only a poison message needs SQS: the client and the send load then (a failed load fails that
      // message, which SQS redelivers).
      const sendToDeadLetterQueue = lazyDeadLetterQueue(clientOptions);
      return {
        mode: options.mode,
        registry: options.registry(config),
        toolCalls: new ToolCallStore({ client: dynamo, tableName: config.TOOL_CALLS_TABLE }),
        idempotency: new IdempotencyStore({
          client: dynamo,
          tableName: config.DEDUPE_TABLE,
          scope: options.service,
          retentionSeconds: config.IDEMPOTENCY_RETENTION_SECONDS,
        }),
        placeResult: (callId, json, options) =>
          placeResult(s3, config.RESULTS_BUCKET, callId, json, config.RESULT_INLINE_MAX_BYTES, options),
        publish: async (events, options = {}) => {
          await putAllRecords(
            kinesis,
            { streamName: config.EVENTS_STREAM_NAME },
            events.map(encodeLifecycleEventRecord),
            { maxAttempts: 5, ...options },
          );
        },
        deadLetter: async (record, reason, options) => {
          await sendToDeadLetterQueue(config.DEAD_LETTER_QUEUE_URL, record, reason, options);
          logger.warn("poison message sent to the DLQ", { messageId: messageIdOf(record), reason });
        },
        logger,
        ...(config.MAX_RECEIVE_COUNT !== undefined
          ? {
              deadLetterAfter: {
                maxReceiveCount: config.MAX_RECEIVE_COUNT,
                queue: config.DEAD_LETTER_QUEUE_URL,
              },
            }
          : {}),
        redelivery: {
          backoff: {
            baseMs: config.RETRY_BACKOFF_BASE_MS,
            capMs: config.RETRY_BACKOFF_MAX_MS,
            ...(config.MAX_RECEIVE_COUNT !== undefined ? { maxReceiveCount: config.MAX_RECEIVE_COUNT } : {}),
          },
          // Only a job reported for retry needs SQS: the client loads then, not at cold start.
          changeVisibility: lazyChangeVisibility(clientOptions),
        },
        concurrency: config.WORKER_CONCURRENCY,
        deadlineMarginMs: config.DEADLINE_MARGIN_MS,
      };
    },
  };
}
