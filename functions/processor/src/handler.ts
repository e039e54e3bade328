import { dynamoDbDocumentClient, sdkRetryBases } from "@mcp-pipeline/aws";
import { consumerHandler, kinesisRecords, type Sandbox } from "@mcp-pipeline/batch/consumer-shell";
import { type ProcessorConfig, processorConfigSchema } from "./config.js";
import { processorDeps, processorReport, processToolCallEvents } from "./core.js";

/**
 * The core's dependencies from the configuration, every client with its SDK retry bases. Exported for
 * test/unit/client-retry-bases.test.ts, which checks each client's backoff; `handler` is the bundle's entry.
 */
export const wire = (config: ProcessorConfig, sandbox: Sandbox) =>
  processorDeps(config, sandbox, dynamoDbDocumentClient({ retryBases: sdkRetryBases(config) }));

/** Kinesis -> the tool-calls table: each call's events folded and written once per batch. */
export const handler = consumerHandler({
  service: "processor",
  config: processorConfigSchema,
  records: kinesisRecords,
  wire,
  process: processToolCallEvents,
  report: processorReport,
});
