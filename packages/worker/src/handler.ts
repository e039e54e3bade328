import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import {
  dynamoDbDocumentClient,
  lazyS3Client,
  loadConfig,
  putAllRecords,
  sendToDeadLetterQueue,
  sqsClient,
} from "@mcp-pipeline/aws";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { failureDetails, InvalidEventError } from "@mcp-pipeline/batch";
import { encodeLifecycleEventRecord } from "@mcp-pipeline/contracts";
import { IdempotencyStore } from "@mcp-pipeline/idempotency";
import { ToolCallStore } from "@mcp-pipeline/tool-calls";
import { ToolRegistry } from "@mcp-pipeline/tool-registry";
import { createTools, inputValidators } from "@mcp-pipeline/tools";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { workerConfigSchema } from "./config.js";
import { processToolCallJobs, type QueueMode, type WorkerDeps, type WorkerSummary } from "./process-jobs.js";
import { placeResult } from "./result-store.js";

export interface WorkerHandlerOptions {
  /** Powertools service name and metric dimension, e.g. `tool-worker`. */
  readonly service: string;
  readonly mode: QueueMode;
}

export type WorkerHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * A worker Lambda handler: a thin shell that parses the event, builds its clients once per sandbox,
 * calls processToolCallJobs and maps the outcome to the partial batch response, logs and metrics.
 */
export function createWorkerHandler(options: WorkerHandlerOptions): WorkerHandler {
  // The SDK reads AWS_ENDPOINT_URL_* and credentials from process.env itself; config comes from the same place.
  const env = process.env;
  const logger = new Logger({ serviceName: options.service });
  const metrics = new Metrics({
    serviceName: options.service,
    namespace: env.METRICS_NAMESPACE ?? "McpPipeline",
  });
  let built: WorkerDeps | undefined;

  // Built on the first invocation, then reused: clients, config and compiled schemas live as long as
  // the sandbox. A bad configuration or tool definition fails every invocation loudly, with its reason.
  const dependencies = (): WorkerDeps => {
    if (built) return built;
    const config = loadConfig(workerConfigSchema, env);
    const dynamo = dynamoDbDocumentClient();
    // Only a result over the inline limit needs S3: the client loads then, not at cold start.
    const s3 = lazyS3Client({}, env);
    const kinesis = kinesisClient();
    const sqs = sqsClient();
    built = {
      mode: options.mode,
      registry: new ToolRegistry(createTools(config), inputValidators),
      toolCalls: new ToolCallStore({ client: dynamo, tableName: config.TOOL_CALLS_TABLE }),
      idempotency: new IdempotencyStore({
        client: dynamo,
        tableName: config.DEDUPE_TABLE,
        scope: options.service,
        retentionSeconds: config.IDEMPOTENCY_RETENTION_SECONDS,
      }),
      placeResult: (callId, json) =>
        placeResult(s3, config.RESULTS_BUCKET, callId, json, config.RESULT_INLINE_MAX_BYTES),
      publish: async (events) => {
        await putAllRecords(
          kinesis,
          { streamName: config.EVENTS_STREAM_NAME },
          events.map(encodeLifecycleEventRecord),
          { maxAttempts: 5 },
        );
      },
      deadLetter: async (record, reason) => {
        await sendToDeadLetterQueue(sqs, config.DEAD_LETTER_QUEUE_URL, record, reason);
        logger.warn("poison message sent to the DLQ", { messageId: record.messageId, reason });
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
      concurrency: config.WORKER_CONCURRENCY,
      deadlineMarginMs: config.DEADLINE_MARGIN_MS,
    };
    return built;
  };

  const publishMetrics = (summary: WorkerSummary): void => {
    metrics.addMetric("Jobs", MetricUnit.Count, summary.messages);
    metrics.addMetric("Succeeded", MetricUnit.Count, summary.succeeded);
    metrics.addMetric("FailedPermanently", MetricUnit.Count, summary.failedPermanently);
    metrics.addMetric("DeadLettered", MetricUnit.Count, summary.deadLettered);
    metrics.addMetric("Duplicates", MetricUnit.Count, summary.duplicates);
    metrics.addMetric("Retried", MetricUnit.Count, summary.retried);
    metrics.addMetric("LeavingForDlq", MetricUnit.Count, summary.leavingForDlq);
    metrics.addMetric("BatchDuration", MetricUnit.Milliseconds, summary.durationMs);
    metrics.publishStoredMetrics();
  };

  return async (event, context) => {
    if (!event || !Array.isArray(event.Records)) {
      throw new InvalidEventError("expected an SQS event with a Records array");
    }
    logger.addContext(context);
    const { response, summary, outcome } = await processToolCallJobs(event.Records, context, dependencies());
    const identify = (r: SQSRecord) => ({
      messageId: r.messageId,
      receiveCount: r.attributes.ApproximateReceiveCount,
    });
    for (const failure of failureDetails(outcome, identify)) logger.error("job reported for retry", failure);
    logger.info("batch processed", { ...summary, batchItemFailures: response.batchItemFailures });
    publishMetrics(summary);
    return { batchItemFailures: [...response.batchItemFailures] };
  };
}

export { InvalidEventError };
