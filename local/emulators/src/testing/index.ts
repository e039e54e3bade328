export { sdkAbortError, untilAborted } from "./abort.js";
export {
  assertNoPrototypePollution,
  asText,
  BAD_INPUT_CATEGORIES,
  type BadInput,
  BadInputCategory,
  type BadInputCorpus,
  type BadInputExpectations,
  type BadInputRow,
  badArguments,
  badDocuments,
  badInputTable,
  DECODE_ERROR_CLASS,
  type DecodeErrorCode,
  type DocumentShape,
  KINESIS_RECORD_MAX_BYTES,
  lifecycleEventShape,
  MissingBadInputCategoryError,
  NESTING_DEPTH,
  nestedArrays,
  nestedObjects,
  POLLUTION_MARKER,
  SQS_MESSAGE_MAX_BYTES,
  toolCallJobShape,
} from "./bad-inputs.js";
export { bundleAll, FUNCTIONS, type FunctionName, type SourcePatch } from "./bundles.js";
export { lambdaContext } from "./context.js";
export {
  type KinesisFidelityProxy,
  type KinesisFidelityProxyOptions,
  KinesisOperation,
  KinesisRetryableError,
  SHARD_ITERATOR_LIFETIME_MS,
  startKinesisFidelityProxy,
} from "./kinesis-fidelity-proxy.js";
export { startMotoServer } from "./moto-server.js";
export { captureOutput, captureStreams } from "./output.js";
export {
  type KinesisFailureRecordInit,
  type KinesisRecordInit,
  kinesisFailureRecord,
  kinesisRecord,
  kinesisRecordWithRawData,
  type SqsRecordInit,
  sequenceNumber,
  sqsRecord,
  TEST_ACCOUNT,
  TEST_REGION,
  TEST_STREAM_ARN,
} from "./records.js";
export { countRequests, type RequestCounter } from "./request-counter.js";
