export { AlreadyInProgressError, ClaimLostError } from "./errors.js";
export { type IdempotencyRecord, isCompleted, isLive, RecordStatus } from "./record.js";
export { type ClaimStore, type RunOnceResult, runOnce } from "./run-once.js";
export {
  type Claim,
  type ClaimResult,
  IdempotencyStore,
  type IdempotencyStoreOptions,
} from "./store.js";
export { dedupeTableDefinition, dedupeTimeToLive } from "./table.js";
