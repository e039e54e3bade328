export { type ProcessorConfig, processorConfigSchema } from "./config.js";
export { handler, InvalidEventError } from "./handler.js";
export {
  type BatchSummary,
  type ProcessorDeps,
  type ProcessResult,
  processToolCallEvents,
} from "./process-events.js";
