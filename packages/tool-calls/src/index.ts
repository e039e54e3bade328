export { type ClaimFence, ClaimSupersededError, fenceAdmits } from "./fence.js";
export { type Folded, foldEvents } from "./fold.js";
export {
  type Applied,
  type ApplyChange,
  applyEvent,
  type CallClaim,
  type CallEvent,
  CallStatus,
  isFinal,
  RECENT_EVENT_IDS,
  type ToolCallDeadLettered,
  type ToolCallState,
} from "./state.js";
export {
  type CallCache,
  type ClaimedCall,
  ToolCallStore,
  type ToolCallStoreOptions,
  toolCallsTableDefinition,
  WriteContentionError,
} from "./store.js";
