import { wiredEnvironment } from "@mcp-pipeline/settings";

/** dlq-redrive's environment against an SQS and S3 emulator at `endpoint` (the handler's tests and the bundle's). */
export function dlqRedriveEnvironment(
  endpoint: string,
  bucket: string,
  dlqUrl: string,
): Record<string, string> {
  return {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    AWS_ENDPOINT_URL_SQS: endpoint,
    AWS_ENDPOINT_URL_S3: endpoint,
    ...wiredEnvironment("dlq_redrive", {
      quarantine_bucket: bucket,
      stream: "events",
      "queue.dlq_url": dlqUrl,
    }),
  };
}
