import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { loadConfig, sendToDeadLetterQueue, sqsClient } from "@mcp-pipeline/aws";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { failureDetails, InvalidEventError } from "@mcp-pipeline/batch";
import { writeQuarantineRecord } from "@mcp-pipeline/quarantine";
import {
  type FailureStoreDeps,
  listQuarantine,
  moveMessages,
  replayQuarantine,
  rereadRange,
  storedQuarantineKeys,
  storeFailureRecords,
} from "@mcp-pipeline/redrive";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { type ManualAction, manualActionSchema, redriveConfigSchema } from "./config.js";

const logger = new Logger({ serviceName: "dlq-redrive" });
const metrics = new Metrics({
  serviceName: "dlq-redrive",
  namespace: process.env.METRICS_NAMESPACE ?? "McpPipeline",
});

let clients:
  | {
      config: ReturnType<typeof load>;
      s3: ReturnType<typeof s3Client>;
      kinesis: ReturnType<typeof kinesisClient>;
      sqs: ReturnType<typeof sqsClient>;
    }
  | undefined;
const load = () => loadConfig(redriveConfigSchema, process.env);

function dependencies() {
  if (clients) return clients;
  clients = { config: load(), s3: s3Client(), kinesis: kinesisClient(), sqs: sqsClient() };
  return clients;
}

async function onFailureRecords(records: SQSRecord[], context: Context): Promise<SQSBatchResponse> {
  const { config, s3, kinesis, sqs } = dependencies();
  const deps: FailureStoreDeps = {
    reread: (range) => rereadRange(kinesis, range),
    quarantine: (record) => writeQuarantineRecord(s3, config.QUARANTINE_BUCKET, record, { ifAbsent: true }),
    storedKeys: (prefix) => storedQuarantineKeys(s3, config.QUARANTINE_BUCKET, prefix),
    putConcurrency: config.QUARANTINE_PUT_CONCURRENCY,
    deadLetter: async (record, reason) => {
      await sendToDeadLetterQueue(sqs, config.DEAD_LETTER_QUEUE_URL, record, reason);
      logger.error("not an on-failure record: kept in the failure queue's DLQ", {
        messageId: record.messageId,
        reason,
      });
    },
    onLost: (lost) => logger.error("records lost: the stream no longer holds this failed range", { ...lost }),
    functionName: context.functionName,
    concurrency: config.REDRIVE_CONCURRENCY,
    deadlineMarginMs: config.DEADLINE_MARGIN_MS,
  };
  const { response, summary, outcome } = await storeFailureRecords(records, context, deps);
  const identify = (r: SQSRecord) => ({
    messageId: r.messageId,
    receiveCount: r.attributes.ApproximateReceiveCount,
  });
  for (const failure of failureDetails(outcome, identify))
    logger.error("failure record reported for retry", failure);
  logger.info("failure records processed", { ...summary, batchItemFailures: response.batchItemFailures });
  metrics.addMetric("FailureRecords", MetricUnit.Count, summary.messages);
  metrics.addMetric("RecordsQuarantined", MetricUnit.Count, summary.stored);
  metrics.addMetric("RecordsAlreadyQuarantined", MetricUnit.Count, summary.alreadyStored);
  metrics.addMetric("RecordsLost", MetricUnit.Count, summary.lost);
  metrics.addMetric("DeadLettered", MetricUnit.Count, summary.deadLettered);
  metrics.publishStoredMetrics();
  return { batchItemFailures: [...response.batchItemFailures] };
}

async function manual(action: ManualAction): Promise<unknown> {
  const { config, s3, kinesis, sqs } = dependencies();
  if (action.action === "replay") {
    const { reason, since, until, session, shardId } = action.filter;
    const entries = await listQuarantine(s3, config.QUARANTINE_BUCKET, {
      ...(reason !== undefined ? { reason } : {}),
      ...(since !== undefined ? { since: Date.parse(since) } : {}),
      ...(until !== undefined ? { until: Date.parse(until) } : {}),
      ...(session !== undefined ? { session } : {}),
      ...(shardId !== undefined ? { shardId } : {}),
    });
    return replayQuarantine(s3, kinesis, config.QUARANTINE_BUCKET, entries, {
      streamName: config.STREAM_NAME,
      dryRun: action.dryRun,
      ratePerSecond: action.ratePerSecond,
    });
  }
  return moveMessages(sqs, {
    dlqUrl: action.dlqUrl,
    sourceUrl: action.sourceUrl,
    dryRun: action.dryRun,
    ...(action.ratePerSecond ? { ratePerSecond: action.ratePerSecond } : {}),
  });
}

/**
 * Triggered by the Kinesis failure queue (an SQS batch), or invoked by hand with
 * `{"action":"replay",...}` or `{"action":"redrive-dlq",...}` (docs/operations.md). Manual actions are
 * dry runs unless `"dryRun": false`.
 */
export async function handler(event: unknown, context: Context): Promise<unknown> {
  logger.addContext(context);
  if (event && typeof event === "object" && Array.isArray((event as SQSEvent).Records)) {
    const response = await onFailureRecords((event as SQSEvent).Records, context);
    return response;
  }
  const parsed = manualActionSchema.safeParse(event);
  if (!parsed.success) {
    throw new InvalidEventError(`expected an SQS event or a manual action: ${parsed.error.message}`);
  }
  const result = await manual(parsed.data);
  logger.info("manual action done", { action: parsed.data.action, result });
  return result;
}

export { InvalidEventError };
