export {
  type Check,
  CheckStatus,
  failed,
  notChecked,
  passed,
  RecoveryRefusedError,
  refusals,
} from "./checks.js";
export {
  deadLetterFailureKind,
  deadLetterReason,
  FailureKind,
  MAX_RECEIVES_REASON,
  quarantineFailureKind,
} from "./failure-kind.js";
export { decodeFailureRecord } from "./failure-record.js";
export { type KinesisFailureRecord, kinesisFailureRecordSchema } from "./failure-record-schema.js";
export { InterruptedError, interruption } from "./interrupted.js";
export { bodyDigest, type MoveOptions, type MoveSummary, moveMessages } from "./move-messages.js";
export {
  countMessages,
  HOLD_SECONDS,
  type Peek,
  type PeekedMessage,
  peekMessages,
} from "./peek-messages.js";
export {
  countQuarantine,
  type JournalUse,
  listQuarantine,
  matches,
  type QuarantineCounts,
  type QuarantineEntry,
  type QuarantineFilter,
  type QuarantineObjectState,
  type QuarantineScan,
  REPLAY_SEQUENCE,
  REPLAYED,
  REPLAYED_AT,
  recordDigest,
  replayedAt,
  type ScanOptions,
  sameRecordGroups,
  scanQuarantine,
  storedQuarantineKeys,
  type UnreadableObject,
} from "./quarantine-ops.js";
export {
  checkQueueReference,
  InvalidQueueReferenceError,
  moveTaskCheck,
  planRedrive,
  QueueNotFoundError,
  type QueueRef,
  type RedrivePlan,
  resolveQueue,
} from "./redrive-plan.js";
export { checkReplayStream, type ReplayStreamCheck } from "./replay-checks.js";
export {
  JOURNAL_MAX_BYTES,
  type JournalObject,
  parseReplayJournal,
  REPLAY_JOURNAL_FORMAT_VERSION,
  REPLAY_JOURNAL_PREFIX,
  type ReplayJournal,
  ReplayJournalFormatError,
} from "./replay-journal.js";
export {
  type JournalOutcome,
  planReplay,
  ReplayIncompleteError,
  type ReplayItem,
  type ReplayOptions,
  type ReplayPlan,
  type ReplayPlanOptions,
  type ReplaySummary,
  replayQuarantine,
} from "./replay-quarantine.js";
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
export { type Returns, type WatchOptions, watchReturns } from "./watch-returns.js";
