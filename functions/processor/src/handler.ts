import { dynamoDbDocumentClient, sdkRetryBases } from "@mcp-pipeline/aws";
import { consumerHandler, kinesisRecords } from "@mcp-pipeline/batch/consumer-shell";
import { processorConfigSchema } from "./config.js";
import { processorDeps, processorReport, processToolCallEvents } from "./core.js";

/** Kinesis -> the tool-calls table: each call's events folded and written once per batch. */
export const handler = consumerHandler({
  service: "processor",
  config: processorConfigSchema,
  records: kinesisRecords,
  wire: (config, sandbox) =>
    processorDeps(config, sandbox, dynamoDbDocumentClient({ retryBases: sdkRetryBases(config) })),
  process: processToolCallEvents,
  report: processorReport,
});
