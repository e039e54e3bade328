export {
  decodeFailureRecord,
  type KinesisFailureRecord,
  kinesisFailureRecordSchema,
} from "./failure-record.js";
export { countMessages, type MoveOptions, type MoveSummary, moveMessages } from "./move-messages.js";
export {
  countQuarantine,
  listQuarantine,
  matches,
  type QuarantineCounts,
  type QuarantineEntry,
  type QuarantineFilter,
  REPLAY_SEQUENCE,
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
