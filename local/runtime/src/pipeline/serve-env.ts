/**
 * What `npm start -- --serve` prints on stdout: a file a shell can load with `set -a; . FILE; set +a`
 * (or `export $(grep -v '^#' FILE)`), so every line is either NAME=value or a comment.
 */
import { QUEUE_KEYS, queueUrlVariables } from "@mcp-pipeline/settings";
import type { LocalPipeline } from "./pipeline.js";
import { queueRoles } from "./resources.js";

/** The last line: a comment, so loading the file does nothing with it; scripts wait for it. */
export const READY_LINE = "# ready";

/** The file's lines, `extra` before the last one (`# ready`). */
export function serveEnvironment(
  pipeline: LocalPipeline,
  environment: string,
  extra: readonly string[] = [],
): string[] {
  const n = pipeline.names;
  return [
    `# npm start -- --serve: environment ${environment}, stopped with Ctrl-C`,
    `AWS_ENDPOINT_URL_KINESIS=${pipeline.endpoints.kinesis}`,
    `AWS_ENDPOINT_URL_SQS=${pipeline.endpoints.sqs}`,
    `AWS_ENDPOINT_URL_S3=${pipeline.endpoints.s3}`,
    `AWS_ENDPOINT_URL_DYNAMODB=${pipeline.endpoints.dynamodb}`,
    // fauxqs answers STS GetCallerIdentity (account 000000000000): `npm run recover` checks the caller's
    // account against the resources before it changes anything, and refuses when it cannot learn it.
    `AWS_ENDPOINT_URL_STS=${pipeline.endpoints.sqs}`,
    // The SDKs read AWS_REGION, the AWS CLI v1 only AWS_DEFAULT_REGION: both, the environment's region.
    `AWS_REGION=${pipeline.region}`,
    `AWS_DEFAULT_REGION=${pipeline.region}`,
    "AWS_ACCESS_KEY_ID=local",
    "AWS_SECRET_ACCESS_KEY=local",
    `STREAM_NAME=${n.stream}`,
    `TOOL_CALLS_TABLE=${n.toolCallsTable}`,
    `DEDUPE_TABLE=${n.dedupeTable}`,
    `QUARANTINE_BUCKET=${n.quarantineBucket}`,
    `RESULTS_BUCKET=${n.resultsBucket}`,
    ...QUEUE_KEYS.flatMap((key) => {
      const variables = queueUrlVariables(key);
      const roles = queueRoles(key);
      return [
        `${variables.queue}=${pipeline.queues[roles.source].url}`,
        `${variables.dlq}=${pipeline.queues[roles.dlq].url}`,
      ];
    }),
    ...extra,
    READY_LINE,
  ];
}
