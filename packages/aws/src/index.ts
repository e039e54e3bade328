export {
  BATCH_GET_MAX_KEYS,
  BatchGetIncompleteError,
  type BatchGetOptions,
  batchGetAll,
} from "./batch-get.js";
export {
  type ClientOptions,
  dynamoDbDocumentClient,
  kinesisClient,
  s3Client,
  sqsClient,
} from "./clients.js";
export { ConfigError, loadConfig, sqsQueueUrlSchema, streamNameSchema } from "./config.js";
export { DeadLetterAttribute, type DeadLetterReason, sendToDeadLetterQueue } from "./dead-letter.js";
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
export { ESM_SYSTEM_ATTRIBUTES, regionOfArn, toSqsEventRecord } from "./sqs-event.js";
export { onDemandTable } from "./tables.js";
