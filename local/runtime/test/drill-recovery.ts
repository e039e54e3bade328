/**
 * The recovery a drill asks for, as `npm run recover` does it with the recovery package: the records the
 * processor gave up on replayed, the two job DLQs redriven to their queues. For the tests that drive a
 * drill's stack (drill.test.ts, scripts/test/integration/drill-docs.test.ts), given its served file's variables.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { moveMessages, replayQuarantine } from "@mcp-pipeline/recovery";
import { listGivenUp } from "../src/pipeline/given-up.js";

/** Clients of the served stack the file `env` describes. */
export function servedClients(env: Readonly<Record<string, string>>) {
  const options = {
    region: env.AWS_REGION as string,
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  };
  return {
    sqs: sqsClient({ ...options, endpoint: env.AWS_ENDPOINT_URL_SQS as string }),
    s3: s3Client({ ...options, endpoint: env.AWS_ENDPOINT_URL_S3 as string }),
    kinesis: kinesisClient({ ...options, endpoint: env.AWS_ENDPOINT_URL_KINESIS as string }),
    dynamodb: new DynamoDBClient({ ...options, endpoint: env.AWS_ENDPOINT_URL_DYNAMODB as string }),
  };
}

/** Replays the given-up records and redrives the job DLQs; returns how many records were given up. */
export async function recoverDrill(env: Readonly<Record<string, string>>): Promise<{ givenUp: number }> {
  const { sqs, s3, kinesis, dynamodb } = servedClients(env);
  try {
    const givenUp = await listGivenUp(s3, env.QUARANTINE_BUCKET as string);
    await replayQuarantine(s3, kinesis, env.QUARANTINE_BUCKET as string, givenUp, {
      streamName: env.STREAM_NAME as string,
    });
    for (const queue of ["TOOL_JOBS", "SESSION_JOBS"])
      await moveMessages(sqs, {
        dlqUrl: env[`${queue}_DLQ_URL`] as string,
        sourceUrl: env[`${queue}_QUEUE_URL`] as string,
      });
    return { givenUp: givenUp.length };
  } finally {
    for (const c of [sqs, s3, kinesis, dynamodb]) c.destroy();
  }
}
