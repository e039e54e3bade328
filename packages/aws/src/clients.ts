import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { KinesisClient } from "@aws-sdk/client-kinesis";
import { S3Client } from "@aws-sdk/client-s3";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { NodeHttpHandler } from "@smithy/node-http-handler";

/**
 * Options shared by every client. Leave `endpoint` unset in Lambda: the SDK then honours the
 * standard AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_<SERVICE> variables, which is how the local runtime,
 * LocalStack or any emulator is reached without code changes.
 */
export interface ClientOptions {
  readonly region?: string;
  readonly endpoint?: string;
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** SDK attempts per request, including the first. */
  readonly maxAttempts?: number;
  /**
   * Socket timeouts. A request that hangs must fail well before the function times out, or a slow
   * downstream turns into a whole-batch timeout instead of one retried record.
   */
  readonly connectionTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
}

function common(options: ClientOptions) {
  return {
    ...(options.region !== undefined ? { region: options.region } : {}),
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
    ...(options.credentials !== undefined ? { credentials: options.credentials } : {}),
    maxAttempts: options.maxAttempts ?? 3,
    requestHandler: new NodeHttpHandler({
      connectionTimeout: options.connectionTimeoutMs ?? 1_000,
      requestTimeout: options.requestTimeoutMs ?? 5_000,
    }),
  };
}

export function dynamoDbDocumentClient(options: ClientOptions = {}): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient(common(options)), {
    marshallOptions: { removeUndefinedValues: true },
  });
}

/**
 * Path-style addressing when an endpoint override is in force: emulators serve buckets by path, and
 * virtual-host style would need wildcard DNS for 127.0.0.1.
 */
export function s3Client(options: ClientOptions = {}, env: NodeJS.ProcessEnv = process.env): S3Client {
  const overridden = options.endpoint ?? env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
  return new S3Client({ ...common(options), forcePathStyle: overridden !== undefined });
}

/**
 * The Kinesis client defaults to an HTTP/2 handler (for SubscribeToShard); the data-plane calls used
 * here are plain HTTP/1.1 requests, which every emulator and proxy speaks.
 */
export function kinesisClient(options: ClientOptions = {}): KinesisClient {
  return new KinesisClient(common(options));
}

/**
 * Requests go to the configured or regional endpoint, not to the host in each QueueUrl: emulators
 * hand out queue URLs whose hosts (sqs.us-east-1.127.0.0.1) are not valid URLs.
 */
export function sqsClient(options: ClientOptions = {}): SQSClient {
  return new SQSClient({ ...common(options), useQueueUrlAsEndpoint: false });
}
