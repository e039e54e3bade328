export { type CliOptions, DEFAULT_REPORT, parseCli, USAGE } from "./cli.js";
export { type DrainedMessage, drainQueue, peekQueue } from "./drain-queue.js";
export { listGivenUp } from "./given-up.js";
export {
  describePartialSplits,
  type PartialSplits,
  partialSplitAccountingOption,
} from "./partial-splits.js";
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
  downstreamPath,
  type JobItem,
  type Scenario,
  type ScenarioOptions,
  STUCK_PREFIX,
  type StreamItem,
  stuckEventId,
  stuckRounds,
} from "./scenario.js";
export { main, SERVE_HINT, stuckWrites } from "./start.js";
