export { decodeFailureRecord } from "./failure-record.js";
// The zod schema: the definition, for tools and tests; decodeFailureRecord does not use it, so a bundle
// that does not use this export carries no zod (the package has no side effects).
export { type KinesisFailureRecord, kinesisFailureRecordSchema } from "./failure-record-schema.js";
export { countMessages, type MoveOptions, type MoveSummary, moveMessages } from "./move-messages.js";
export {
  countQuarantine,
  listQuarantine,
  matches,
  type QuarantineCounts,
  type QuarantineEntry,
  type QuarantineFilter,
  REPLAY_SEQUENCE,
  REPLAYED,
  REPLAYED_AT,
  type ReplayOptions,
  type ReplaySummary,
  recordDigest,
  replayedAt,
  replayQuarantine,
  sameRecordGroups,
  storedQuarantineKeys,
} from "./quarantine-ops.js";
export {
  type RereadOptions,
  type RereadResult,
  rereadRange,
  type SequenceRange,
} from "./reread.js";
export {
  coveringPrefixes,
  type FailureStoreDeps,
  type FailureStoreSummary,
  type LostRange,
  quarantineRecordOf,
  storeFailureRecords,
} from "./store-failures.js";
