export { type Deadline, deadlineFromContext, NO_DEADLINE, type RemainingTime } from "./deadline.js";
export { InvalidEventError } from "./invalid-event.js";
export {
  FailureScope,
  type ItemContext,
  type ItemHandler,
  type RunOptions,
  runKeyOrdered,
  type SetAside,
} from "./key-ordered-runner.js";
export { type BatchOptions, processKinesisBatch, processSqsBatch, processSqsFifoBatch } from "./modes.js";
export {
  type BatchOutcome,
  checkpointProgress,
  countOutcomes,
  failureDetails,
  type ItemOutcome,
  ItemStatus,
  NotStartedReason,
  needsRedelivery,
} from "./outcome.js";
export {
  DeadlineStage,
  deadlineErrorOf,
  InvocationDeadlineError,
  MARGIN_SHARE,
  type RequestDeadlines,
  requestDeadlines,
  withRequestDeadlines,
} from "./request-deadline.js";
export {
  type BatchItemFailure,
  InvalidBatchResponseError,
  type ItemIdentifier,
  kinesisBatchResponse,
  type PartialBatchResponse,
  sqsBatchResponse,
} from "./response.js";
export { SchedulingRule } from "./schedule.js";
