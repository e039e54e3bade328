export {
  kinesisDataOf,
  kinesisSourceOf,
  quarantineKeyFor,
  shardIdOf,
  UNKNOWN_PARTITION_KEY,
} from "./format.js";
export {
  type FailureContext,
  failureContextSchema,
  type KinesisSource,
  type QuarantineIssue,
  type QuarantineReason,
  type QuarantineRecord,
  type QuarantineValidation,
  quarantineRecordSchema,
  validateQuarantineRecord,
} from "./schema.js";
export {
  getObjectBytes,
  InvalidQuarantineRecordError,
  QuarantineFormatError,
  type QuarantineObject,
  readQuarantineObject,
  readQuarantineRecord,
  writeQuarantineRecord,
} from "./store.js";
export { QUARANTINE_FORMAT_VERSION } from "./version.js";
