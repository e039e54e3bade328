/**
 * The IAM actions an AWS API operation needs, and on which kind of resource, as the Service Authorization
 * Reference lists them (docs/aws-semantics.md §11). Only operations the functions may call are here: an
 * operation a bundle holds that is missing is a finding ("no IAM mapping"), never skipped.
 */

/** The AWS service of an SDK client package (`@aws-sdk/client-sqs` -> sqs); lib-dynamodb is DynamoDB's. */
export const SERVICE_OF_PACKAGE: Readonly<Record<string, string>> = {
  "client-sqs": "sqs",
  "client-kinesis": "kinesis",
  "client-dynamodb": "dynamodb",
  "lib-dynamodb": "dynamodb",
  "client-s3": "s3",
};

/**
 * @aws-sdk/lib-dynamodb's document commands, by the DynamoDB operation each sends: their modules are
 * bundled beside the client's own command, so either names the call.
 */
export const DOCUMENT_COMMANDS: Readonly<Record<string, string>> = {
  Get: "GetItem",
  Put: "PutItem",
  Update: "UpdateItem",
  Delete: "DeleteItem",
  BatchGet: "BatchGetItem",
  BatchWrite: "BatchWriteItem",
  Query: "Query",
  Scan: "Scan",
};

/** What a permission applies to: the resource named (queue, stream, table), an S3 bucket, or S3 objects. */
export type ResourceKind = "resource" | "bucket" | "object";

export interface Permission {
  readonly action: string;
  readonly on: ResourceKind;
}

const own = (service: string, action: string): Permission => ({
  action: `${service}:${action}`,
  on: "resource",
});
const object = (action: string): Permission => ({ action: `s3:${action}`, on: "object" });

/** `service:Operation` -> the permissions it needs. */
export const PERMISSIONS: Readonly<Record<string, readonly Permission[]>> = {
  "sqs:SendMessage": [own("sqs", "SendMessage")],
  "sqs:SendMessageBatch": [own("sqs", "SendMessage")],
  "sqs:ReceiveMessage": [own("sqs", "ReceiveMessage")],
  "sqs:DeleteMessage": [own("sqs", "DeleteMessage")],
  "sqs:DeleteMessageBatch": [own("sqs", "DeleteMessage")],
  "sqs:ChangeMessageVisibility": [own("sqs", "ChangeMessageVisibility")],
  "sqs:ChangeMessageVisibilityBatch": [own("sqs", "ChangeMessageVisibility")],
  "sqs:GetQueueAttributes": [own("sqs", "GetQueueAttributes")],
  "sqs:GetQueueUrl": [own("sqs", "GetQueueUrl")],
  "sqs:ListDeadLetterSourceQueues": [own("sqs", "ListDeadLetterSourceQueues")],
  "sqs:StartMessageMoveTask": [own("sqs", "StartMessageMoveTask")],
  "sqs:ListMessageMoveTasks": [own("sqs", "ListMessageMoveTasks")],
  "sqs:CancelMessageMoveTask": [own("sqs", "CancelMessageMoveTask")],
  "kinesis:PutRecord": [own("kinesis", "PutRecord")],
  "kinesis:PutRecords": [own("kinesis", "PutRecords")],
  "kinesis:GetRecords": [own("kinesis", "GetRecords")],
  "kinesis:GetShardIterator": [own("kinesis", "GetShardIterator")],
  "kinesis:ListShards": [own("kinesis", "ListShards")],
  "kinesis:DescribeStream": [own("kinesis", "DescribeStream")],
  "kinesis:DescribeStreamSummary": [own("kinesis", "DescribeStreamSummary")],
  "dynamodb:GetItem": [own("dynamodb", "GetItem")],
  "dynamodb:PutItem": [own("dynamodb", "PutItem")],
  "dynamodb:UpdateItem": [own("dynamodb", "UpdateItem")],
  "dynamodb:DeleteItem": [own("dynamodb", "DeleteItem")],
  "dynamodb:BatchGetItem": [own("dynamodb", "BatchGetItem")],
  "dynamodb:BatchWriteItem": [own("dynamodb", "BatchWriteItem")],
  "dynamodb:Query": [own("dynamodb", "Query")],
  "dynamodb:Scan": [own("dynamodb", "Scan")],
  "s3:PutObject": [object("PutObject")],
  "s3:GetObject": [object("GetObject")],
  // HEAD is authorised as GetObject.
  "s3:HeadObject": [object("GetObject")],
  // A copy reads its source and writes its target, both objects of the same bucket here.
  "s3:CopyObject": [object("GetObject"), object("PutObject")],
  "s3:DeleteObject": [object("DeleteObject")],
  "s3:GetObjectTagging": [object("GetObjectTagging")],
  "s3:PutObjectTagging": [object("PutObjectTagging")],
  "s3:ListObjectsV2": [{ action: "s3:ListBucket", on: "bucket" }],
};

/**
 * Commands the SDK bundles with a client that the functions never send, and why: finding them in a
 * bundle is not a call. Anything else in a bundle is a call the code can make.
 */
export const NEVER_SENT: Readonly<Record<string, string>> = {
  "dynamodb:DescribeEndpoints":
    "endpoint discovery: the DynamoDB client sends it only when endpoint discovery is enabled (endpointDiscoveryEnabled or AWS_ENABLE_ENDPOINT_DISCOVERY), which no client or function environment here does",
  "s3:CreateSession":
    "S3 Express One Zone: the S3 client sends it only for directory buckets (--x-s3 names); these buckets are general purpose",
};
