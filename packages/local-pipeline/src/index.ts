export { type CliOptions, DEFAULT_REPORT, parseCli, TIMED_OUT, USAGE } from "./cli.js";
export { type DrainedMessage, drainQueue, peekQueue } from "./drain-queue.js";
export { listGivenUp } from "./given-up.js";
export {
  type Endpoints,
  endpointsFromEnvironment,
  type FunctionName,
  type InvokeFunction,
  LocalPipeline,
  type PipelineOptions,
} from "./pipeline.js";
export type { ProcessorTrafficCounts } from "./processor-traffic.js";
export {
  createLocalResources,
  type LocalResources,
  type QueueHandle,
  type QueueRole,
  queueAttributes,
  type ResourceClients,
  SOURCE_QUEUE_RECEIVE_WAIT_SECONDS,
} from "./resources.js";
export { type Progress, runScenario, type Summary } from "./run-scenario.js";
export {
  buildScenario,
  type JobItem,
  type Scenario,
  type ScenarioOptions,
  STUCK_PREFIX,
  type StreamItem,
} from "./scenario.js";
export { HELP_COMMAND, main, type Prepared, prepare, run, SERVE_HINT, stuckWrites } from "./start.js";
export { exitStatusOf, StopCause, type StopRequests, watchStopRequests } from "./stop-requests.js";
