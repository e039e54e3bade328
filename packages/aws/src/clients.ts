import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { type ClientOptions, commonClientConfig } from "./client-options.js";

// The S3 and Kinesis factories live in s3-client.ts and kinesis-client.ts, not here: a function that
// needs them only on a rare path loads them through lazy-clients.ts, and a static import from this
// file would put their whole SDK client back on the import path of every function. They share
// client-options.ts rather than this file, so that loading them does not drag DynamoDB along.

export function dynamoDbDocumentClient(options: ClientOptions = {}): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient(commonClientConfig(options)), {
    marshallOptions: { removeUndefinedValues: true },
  });
}

/**
 * Requests go to the configured or regional endpoint, not to the host in each QueueUrl: emulators
 * hand out queue URLs whose hosts (sqs.us-east-1.127.0.0.1) are not valid URLs.
 */
export function sqsClient(options: ClientOptions = {}): SQSClient {
  return new SQSClient({ ...commonClientConfig(options), useQueueUrlAsEndpoint: false });
}
