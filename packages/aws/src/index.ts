// The S3, Kinesis and SQS client factories are entries of their own ("@mcp-pipeline/aws/s3-client",
// "@mcp-pipeline/aws/kinesis-client", "@mcp-pipeline/aws/sqs-client", the last with sendToDeadLetterQueue),
// not exports of this index: bundled with code splitting, a file this index reaches is loaded by every
// function that imports the package as soon as any chunk uses it, so the processor, whose quarantine alone
// uses S3, would load the S3 client at every cold start, and the workers, which send to SQS only for a
// poison message, the SQS client (docs/benchmarks/cold-start.md). For the same reason, a lazy loader that
// imports one of them lives with its one user (the workers' dead-letter-queue.ts): a dynamic import in a
// file the index reaches adds a chunk to every bundle that uses the index, whether it calls it or not.
export {
  BATCH_GET_MAX_KEYS,
  BatchGetIncompleteError,
  type BatchGetOptions,
  batchGetAll,
} from "./batch-get.js";
export { type ClientOptions, commonClientConfig } from "./client-options.js";
export { dynamoDbDocumentClient } from "./clients.js";
export { ConfigError, type ConfigSchema, loadConfig } from "./config.js";
export { DeadLetterAttribute, type DeadLetterReason, deadLetterMessage } from "./dead-letter.js";
export { type LazyClient, lazyS3Client, once } from "./lazy-clients.js";
export {
  OrderingMode,
  PUT_RECORDS_LIMITS,
  PutRecordsIncompleteError,
  type PutRecordsLimits,
  type PutRecordsOptions,
  type PutRecordsResult,
  planRequests,
  putAllRecords,
  putRecords,
  type RejectedRecord,
  recordSizeBytes,
  UNSENT_AFTER_GIVEN_UP,
  type WrittenRecord,
} from "./producer.js";
export type { ProducerRecord, StreamTarget } from "./put-request.js";
export { type RequestOptions, sendOptions } from "./request-options.js";
export { SDK_RETRY_BASES, type SdkRetryBases, sdkRetryBases } from "./sdk-retry.js";
export { compareSequenceNumbers } from "./sequence-number.js";
export { onDemandTable } from "./tables.js";
