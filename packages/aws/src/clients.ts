import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { type ClientOptions, commonClientConfig } from "./client-options.js";
import { dynamoDbRetryBases } from "./sdk-retry.js";

// The S3, Kinesis and SQS factories live in s3-client.ts, kinesis-client.ts and sqs-client.ts, not here: a
// function that needs them only on a rare path loads them through lazy-clients.ts, and a static import from
// this file would put their whole SDK client back on the import path of every function. They share
// client-options.ts rather than this file, so that loading them does not drag DynamoDB along.

export function dynamoDbDocumentClient(options: ClientOptions = {}): DynamoDBDocumentClient {
  const config = commonClientConfig(
    options.retryBases === undefined
      ? options
      : { ...options, retryBases: dynamoDbRetryBases(options.retryBases) },
  );
  return DynamoDBDocumentClient.from(new DynamoDBClient(config), {
    marshallOptions: { removeUndefinedValues: true },
  });
}
