/**
 * The yardstick of `npm run bench:cold-start`, not part of the product: the processor's job (apply
 * each tool-call lifecycle event of a Kinesis batch to the tool-calls table once, report partial
 * failures) written the usual way, on Powertools' batch, idempotency, logger and metrics with the
 * DynamoDB document client. Bundled exactly like a function (tools/bundler).
 */
import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import { IdempotencyConfig, makeIdempotent } from "@aws-lambda-powertools/idempotency";
import { DynamoDBPersistenceLayer } from "@aws-lambda-powertools/idempotency/dynamodb";
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { Context, KinesisStreamEvent, KinesisStreamRecord } from "aws-lambda";

// Read once, as the product's handlers read their configuration.
const env = process.env;
const logger = new Logger({ serviceName: "processor-powertools" });
const metrics = new Metrics({ serviceName: "processor-powertools", namespace: "McpPipelineBench" });
const processor = new BatchProcessor(EventType.KinesisDataStreams);
const client = DynamoDBDocumentClient.from(new DynamoDBClient({}), {
  marshallOptions: { removeUndefinedValues: true },
});
const idempotencyConfig = new IdempotencyConfig({ eventKeyJmesPath: "eventId" });
const persistenceStore = new DynamoDBPersistenceLayer({
  tableName: env.DEDUPE_TABLE ?? "",
  awsSdkV3Client: client,
});

interface LifecycleEvent {
  readonly eventId: string;
  readonly callId: string;
  readonly sessionId: string;
  readonly type: string;
  readonly occurredAt: string;
}

const apply = makeIdempotent(
  async (event: LifecycleEvent) => {
    await client.send(
      new UpdateCommand({
        TableName: env.TOOL_CALLS_TABLE,
        Key: { callId: event.callId },
        UpdateExpression: "SET sessionId = :s, #status = :t, updatedAt = :o",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":s": event.sessionId, ":t": event.type, ":o": event.occurredAt },
      }),
    );
    return event.eventId;
  },
  { persistenceStore, config: idempotencyConfig },
);

async function recordHandler(record: KinesisStreamRecord): Promise<void> {
  const event = JSON.parse(Buffer.from(record.kinesis.data, "base64").toString("utf8")) as LifecycleEvent;
  await apply(event);
  metrics.addMetric("Applied", MetricUnit.Count, 1);
}

export async function handler(event: KinesisStreamEvent, context: Context) {
  logger.addContext(context);
  idempotencyConfig.registerLambdaContext(context);
  const response = await processPartialResponse(event, recordHandler, processor, { context });
  logger.info("batch processed", { records: event.Records.length, failures: response.batchItemFailures });
  metrics.publishStoredMetrics();
  return response;
}
