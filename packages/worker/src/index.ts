export {
  MAX_INLINE_RESULT_BYTES,
  type WorkerConfig,
  type WorkerFunction,
  workerConfigSchema,
} from "./config.js";
export { type WorkerOptions, workerConsumer, workerMetrics } from "./consumer.js";
export { type DeadLetterModule, type DeadLetterSend, lazyDeadLetterQueue } from "./dead-letter-queue.js";
export {
  completedEvent,
  deadLetteredEvent,
  eventIdFor,
  failedEvent,
  type PublishEvents,
  startedEvent,
  summarise,
  terminalEventOf,
} from "./lifecycle.js";
export {
  processToolCallJobs,
  QueueMode,
  type WorkerDeps,
  type WorkerResult,
  type WorkerSummary,
} from "./process-jobs.js";
export {
  backOffRedeliveries,
  type ChangeVisibility,
  lazyChangeVisibility,
  type Redelivery,
  type VisibilityFailure,
} from "./redelivery.js";
export {
  backoffSeconds,
  planVisibilityChanges,
  type RedeliveryBackoff,
  type VisibilityChange,
} from "./redelivery-backoff.js";
export { type PlacedResult, placeResult, resultKeyFor } from "./result-store.js";
