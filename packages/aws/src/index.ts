export {
  BATCH_GET_MAX_KEYS,
  BatchGetIncompleteError,
  type BatchGetOptions,
  batchGetAll,
} from "./batch-get.js";
export { type ClientOptions, dynamoDbDocumentClient, s3Client } from "./clients.js";
export { ConfigError, loadConfig } from "./config.js";
export { onDemandTable } from "./tables.js";
