import { once, sdkRetryBases } from "@mcp-pipeline/aws";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { consumerHandler, sqsRecords } from "@mcp-pipeline/batch/consumer-shell";
import { dlqRedriveConfigSchema } from "./config.js";
import {
  dlqRedriveDeps,
  dlqRedriveReport,
  parseManualAction,
  runManualAction,
  sqsModule,
  storeFailures,
} from "./core.js";

/**
 * Triggered by the Kinesis failure queue (an SQS batch), or invoked by hand with `{"action":"replay",...}`
 * or `{"action":"redrive-dlq",...}` (docs/operations.md): dry runs unless `"dryRun": false`.
 */
export const handler = consumerHandler({
  service: "dlq-redrive",
  config: dlqRedriveConfigSchema,
  records: sqsRecords,
  wire: (config, sandbox) => {
    const clientOptions = { retryBases: sdkRetryBases(config) };
    return dlqRedriveDeps(
      config,
      {
        s3: s3Client(clientOptions),
        kinesis: kinesisClient(clientOptions),
        sqs: once(async () => (await sqsModule()).sqsClient(clientOptions)),
      },
      sandbox,
    );
  },
  process: storeFailures,
  report: dlqRedriveReport,
  manual: { parse: parseManualAction, run: runManualAction },
});
