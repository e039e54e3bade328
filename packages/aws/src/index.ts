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
export { kinesisClient } from "./kinesis-client.js";
export { type LazyClient, lazyKinesisClient, lazyS3Client } from "./lazy-clients.js";
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
  type WrittenRecord,
} from "./producer.js";
export { s3Client } from "./s3-client.js";
export { compareSequenceNumbers } from "./sequence-number.js";
export { ESM_SYSTEM_ATTRIBUTES, regionOfArn, toSqsEventRecord } from "./sqs-event.js";
export { onDemandTable } from "./tables.js";
