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
export { processToolCallJobs, type WorkerResult, type WorkerSummary } from "./process-jobs.js";
export { QueueMode } from "./queue-mode.js";
export {
  backOffRedeliveries,
  type ChangeVisibility,
  lazyChangeVisibility,
  type Redelivery,
} from "./redelivery.js";
export {
  backoffSeconds,
  planVisibilityChanges,
  type RedeliveryBackoff,
  type VisibilityChange,
} from "./redelivery-backoff.js";
export { type PlacedResult, placeResult, resultKeyFor } from "./result-store.js";
export type { VisibilityFailure } from "./sqs-visibility.js";
export type { WorkerDeps } from "./worker-deps.js";
