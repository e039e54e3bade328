import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { consumerHandler, sqsRecords } from "@mcp-pipeline/consumer-shell";
import { redriveConfigSchema } from "./config.js";
import { parseManualAction, redriveDeps, redriveReport, runManualAction, storeFailures } from "./core.js";

/**
 * Triggered by the Kinesis failure queue (an SQS batch), or invoked by hand with `{"action":"replay",...}`
 * or `{"action":"redrive-dlq",...}` (docs/operations.md): dry runs unless `"dryRun": false`.
 */
export const handler = consumerHandler({
  service: "dlq-redrive",
  config: redriveConfigSchema,
  records: sqsRecords,
  wire: (config, sandbox) =>
    redriveDeps(config, { s3: s3Client(), kinesis: kinesisClient(), sqs: sqsClient() }, sandbox),
  process: storeFailures,
  report: redriveReport,
  manual: { parse: parseManualAction, run: runManualAction },
});
