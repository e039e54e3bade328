export {
  type DecodeResult,
  decodeBase64,
  decodeLifecycleEvent,
  decodeLifecycleEventBytes,
  decodeToolCallJob,
} from "./decode.js";
export {
  BadEncodingError,
  BadJsonError,
  DecodeError,
  DecodeErrorCode,
  MalformedRecordError,
  type SchemaIssue,
  SchemaViolationError,
  UnsupportedVersionError,
} from "./decode-error.js";
export {
  EncodeError,
  encodeLifecycleEvent,
  encodeLifecycleEventRecord,
  encodeToolCallJob,
  type KinesisRecordInput,
} from "./encode.js";
export {
  FailureKind,
  failureCodeOf,
  failureKindOf,
  messageOf,
  PermanentError,
  TransientError,
} from "./failure.js";
export {
  arrivalSecondsOf,
  decodeRecord,
  eventSourceArnOf,
  kinesisRecordIssues,
  messageGroupIdOf,
  messageIdOf,
  partitionKeyOf,
  receiveCountOf,
  sequenceNumberOf,
  sqsRecordIssues,
} from "./lambda-records.js";
export {
  lifecycleEventSchema,
  type ResultLocation,
  type ToolCallCompleted,
  type ToolCallFailed,
  type ToolCallLifecycleEvent,
  type ToolCallRequested,
  type ToolCallStarted,
} from "./lifecycle-event.js";
export { LifecycleEventType } from "./lifecycle-event-type.js";
export { clipText, PREVIEW_MAX_CHARS, previewOf } from "./preview.js";
export { jsonErrorForLogs, urlForLogs } from "./redact.js";
export { CURRENT_SPEC_VERSION, SUPPORTED_SPEC_VERSIONS } from "./spec-version.js";
export { type ToolCallJob, toolCallJobSchema } from "./tool-call-job.js";
