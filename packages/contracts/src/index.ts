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
  LifecycleEventType,
  lifecycleEventSchema,
  type ResultLocation,
  type ToolCallCompleted,
  type ToolCallFailed,
  type ToolCallLifecycleEvent,
  type ToolCallRequested,
  type ToolCallStarted,
} from "./lifecycle-event.js";
export { CURRENT_SPEC_VERSION, SUPPORTED_SPEC_VERSIONS } from "./schema-common.js";
export { type ToolCallJob, toolCallJobSchema } from "./tool-call-job.js";
