export { type Folded, foldEvents } from "./fold.js";
export {
  type Applied,
  type ApplyChange,
  applyEvent,
  type CallEvent,
  CallStatus,
  RECENT_EVENT_IDS,
  type ToolCallDeadLettered,
  type ToolCallState,
} from "./state.js";
export {
  type CallCache,
  ToolCallStore,
  type ToolCallStoreOptions,
  toolCallsTableDefinition,
  WriteContentionError,
} from "./store.js";
