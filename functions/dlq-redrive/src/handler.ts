import { once, sdkRetryBases } from "@mcp-pipeline/aws";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { consumerHandler, type Sandbox, sqsRecords } from "@mcp-pipeline/batch/consumer-shell";
import { type DlqRedriveConfig, dlqRedriveConfigSchema } from "./config.js";
import {
  dlqRedriveDeps,
  dlqRedriveReport,
  parseManualAction,
  runManualAction,
  sqsModule,
  storeFailures,
} from "./core.js";

/**
 * The clients and the failure records' path from the configuration, every client with its SDK retry bases.
 * Exported for test/unit/client-retry-bases.test.ts, which checks each client's backoff; `handler` is the
 * bundle's entry.
 */
export const wire = (config: DlqRedriveConfig, sandbox: Sandbox) => {
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
};

/**
 * Triggered by the Kinesis failure queue (an SQS batch), or invoked by hand with `{"action":"replay",...}`
 * or `{"action":"redrive-dlq",...}` (docs/operations.md): dry runs unless `"dryRun": false`.
 */
export const handler = consumerHandler({
  service: "dlq-redrive",
  config: dlqRedriveConfigSchema,
  records: sqsRecords,
  wire,
  process: storeFailures,
  report: dlqRedriveReport,
  manual: { parse: parseManualAction, run: runManualAction },
});
