export {
  type FailureContext,
  failureContextSchema,
  type KinesisSource,
  kinesisSourceOf,
  QUARANTINE_FORMAT_VERSION,
  type QuarantineReason,
  type QuarantineRecord,
  quarantineKeyFor,
  quarantineRecordSchema,
  shardIdOf,
} from "./format.js";
export { QuarantineFormatError, readQuarantineRecord, writeQuarantineRecord } from "./store.js";
