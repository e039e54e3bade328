// The S3 and Kinesis client factories are entries of their own ("@mcp-pipeline/aws/s3-client",
// "@mcp-pipeline/aws/kinesis-client"), not exports of this index: bundled with code splitting, a file this
// index reaches is loaded by every function that imports the package as soon as any chunk uses it, so the
// processor, whose quarantine alone uses S3, would load the S3 client at every cold start
// (docs/benchmarks/cold-start.md).
export {
  BATCH_GET_MAX_KEYS,
  BatchGetIncompleteError,
  type BatchGetOptions,
  batchGetAll,
} from "./batch-get.js";
export type { ClientOptions } from "./client-options.js";
export { dynamoDbDocumentClient, sqsClient } from "./clients.js";
export { ConfigError, type ConfigSchema, loadConfig } from "./config.js";
export { sqsQueueUrlSchema, streamNameSchema } from "./config-schemas.js";
export { DeadLetterAttribute, type DeadLetterReason, sendToDeadLetterQueue } from "./dead-letter.js";
export { type LazyClient, lazyS3Client, once } from "./lazy-clients.js";
export {
  OrderingMode,
  type ProducerRecord,
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
  type StreamTarget,
  UNSENT_AFTER_GIVEN_UP,
  type WrittenRecord,
} from "./producer.js";
export { compareSequenceNumbers } from "./sequence-number.js";
export { onDemandTable } from "./tables.js";
