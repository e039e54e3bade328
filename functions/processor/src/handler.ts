import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { dynamoDbDocumentClient, loadConfig, once } from "@mcp-pipeline/aws";
import { failureDetails, InvalidEventError } from "@mcp-pipeline/batch";
import { ToolCallStore } from "@mcp-pipeline/tool-calls";
import type { Context, KinesisStreamEvent } from "aws-lambda";
import { processorConfigSchema } from "./config.js";
import { type BatchSummary, type ProcessorDeps, processToolCallEvents } from "./process-events.js";

const logger = new Logger({ serviceName: "processor" });
const metrics = new Metrics({
  serviceName: "processor",
  namespace: process.env.METRICS_NAMESPACE ?? "McpPipeline",
});

let deps: ProcessorDeps | undefined;

/** Built on the first invocation, then reused: clients and config live as long as the sandbox. */
function dependencies(functionName: string): ProcessorDeps {
  if (deps) return deps;
  const config = loadConfig(processorConfigSchema, process.env);
  const dynamo = dynamoDbDocumentClient();
  // Quarantine is the rare path: the S3 client and the quarantine writer load on the first bad record,
  // not at import (docs/benchmarks/cold-start.md).
  const writer = once(async () => {
    const rare = await import("./quarantine-writer.js");
    return { ...rare, client: rare.s3Client() };
  });
  deps = {
    toolCalls: new ToolCallStore({ client: dynamo, tableName: config.TOOL_CALLS_TABLE }),
    quarantine: async (record, reason) => {
      const { kinesisSourceOf, writeQuarantineRecord, client } = await writer();
      const { key } = await writeQuarantineRecord(client, config.QUARANTINE_BUCKET, {
        formatVersion: 1,
        source: kinesisSourceOf(record),
        data: record.kinesis.data,
        reason,
        quarantinedAt: new Date().toISOString(),
        quarantinedBy: functionName,
      });
      logger.warn("record quarantined", { sequenceNumber: record.kinesis.sequenceNumber, reason, key });
    },
    concurrency: config.PROCESSOR_CONCURRENCY,
    deadlineMarginMs: config.DEADLINE_MARGIN_MS,
    onPrefetchError: (error) => logger.warn("batch pre-read failed; reading per call", { error }),
  };
  return deps;
}

function publish(summary: BatchSummary): void {
  metrics.addMetric("Records", MetricUnit.Count, summary.records);
  metrics.addMetric("Applied", MetricUnit.Count, summary.applied);
  metrics.addMetric("Duplicates", MetricUnit.Count, summary.duplicates);
  metrics.addMetric("Quarantined", MetricUnit.Count, summary.quarantined);
  metrics.addMetric("Failed", MetricUnit.Count, summary.failed);
  metrics.addMetric("BatchDuration", MetricUnit.Milliseconds, summary.durationMs);
  metrics.addMetric("OldestRecordAge", MetricUnit.Milliseconds, summary.oldestRecordAgeMs);
  metrics.publishStoredMetrics();
}

export async function handler(event: KinesisStreamEvent, context: Context) {
  if (!event || !Array.isArray(event.Records)) {
    throw new InvalidEventError("expected a Kinesis event with a Records array");
  }
  logger.addContext(context);
  const { response, summary, outcome } = await processToolCallEvents(
    event.Records,
    context,
    dependencies(context.functionName),
  );
  const identify = (r: (typeof event.Records)[number]) => ({
    sequenceNumber: r.kinesis.sequenceNumber,
    partitionKey: r.kinesis.partitionKey,
  });
  for (const failure of failureDetails(outcome, identify)) logger.error("record not processed", failure);
  logger.info("batch processed", { ...summary, batchItemFailures: response.batchItemFailures });
  publish(summary);
  return response;
}

export { InvalidEventError };
