export { type BatchResponseReading, readBatchResponse } from "./batch-response.js";
export { RequestAbandonedError, sendWithin } from "./bounded-request.js";
export type { Invokable } from "./invokable.js";
export {
  eventRecordBytes,
  kinesisEventRecord,
  MAX_PAYLOAD_BYTES,
  type ShardRecord,
  type StreamIdentity,
} from "./kinesis/event.js";
export { FailureCondition, failureRecord, type KinesisFailureRecord } from "./kinesis/failure-record.js";
export {
  InvalidEsmOptionError,
  PartialSplitAccounting,
} from "./kinesis/partial-split-accounting.js";
export {
  type KinesisEsmEvent,
  type KinesisEsmOperation,
  type KinesisEsmOptions,
  type KinesisEsmParameters,
  type KinesisEsmStats,
  KinesisEventSource,
} from "./kinesis/poller.js";
export {
  assertNoReservedVariables,
  type FunctionCode,
  type FunctionDefinition,
  type FunctionLogging,
  type InvokeResult,
  LocalFunction,
  type LogSink,
  RESERVED_VARIABLES,
  ReservedVariableError,
  runtimeVariables,
} from "./lambda/local-function.js";
export { NotAZipError, unpackTo, unzip, unzipTo } from "./lambda/unzip.js";
export {
  type SqsEsmEvent,
  type SqsEsmOperation,
  type SqsEsmOptions,
  type SqsEsmParameters,
  type SqsEsmStats,
  SqsEventSource,
  VisibilityTimeoutError,
} from "./sqs/poller.js";
