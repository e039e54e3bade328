export {
  kinesisDataOf,
  kinesisSourceOf,
  quarantineKeyFor,
  shardIdOf,
  UNKNOWN_PARTITION_KEY,
} from "./format.js";
// The zod schemas: the format's definition, for tools and tests; the writer and reader validate with
// validate.ts, so a bundle that does not use these exports carries no zod (the package has no side effects).
export {
  type FailureContext,
  failureContextSchema,
  type KinesisSource,
  type QuarantineReason,
  type QuarantineRecord,
  quarantineRecordSchema,
} from "./schema.js";
export {
  InvalidQuarantineRecordError,
  QuarantineFormatError,
  type QuarantineObject,
  readQuarantineObject,
  readQuarantineRecord,
  writeQuarantineRecord,
} from "./store.js";
export { type QuarantineIssue, type QuarantineValidation, validateQuarantineRecord } from "./validate.js";
export { QUARANTINE_FORMAT_VERSION } from "./version.js";
