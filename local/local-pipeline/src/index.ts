export { type CliOptions, DEFAULT_REPORT, parseCli, TIMED_OUT, USAGE } from "./cli.js";
export { type DrainedMessage, drainQueue, peekQueue } from "./drain-queue.js";
export {
  DRILL_SIZE,
  DrillNotReadyError,
  type DrillPlan,
  drillBriefing,
  planDrill,
  setUpDrill,
  watchDownstream,
} from "./drill.js";
export {
  checkDrill,
  type DrillClients,
  DrillOutcome,
  type DrillVerdict,
  formatDrillVerdict,
  type JudgedInput,
  nameOf,
} from "./drill-check.js";
export { DRILL_CHECK_USAGE, drillCheckMain } from "./drill-check-cli.js";
export { type DrillDownstream, startDrillDownstream } from "./drill-downstream.js";
export {
  DRILL_LEDGER_FORMAT,
  DrillExpectation,
  type DrillInput,
  type DrillLedger,
  DrillLedgerError,
  type DrillQueue,
  readDrillLedger,
  writeDrillLedger,
} from "./drill-ledger.js";
export {
  type EnvironmentInputs,
  FUNCTION_NAMES,
  functionEnvironment,
  SETTINGS_KEY,
} from "./function-environment.js";
export { shownByVerbose } from "./function-logs.js";
export {
  FunctionPackageError,
  LOCAL_RUNTIME,
  readDistManifest,
  type UnpackedFunction,
  unpackFunction,
} from "./function-package.js";
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
export { queueDepth } from "./queue-depth.js";
export {
  judgeRepresentative,
  type LoadFigures,
  type Representativeness,
} from "./representative.js";
export {
  createLocalResources,
  type LocalResources,
  type QueueHandle,
  type QueueRole,
  queueAttributes,
  type ResourceClients,
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
export { HELP_COMMAND, main, type Prepared, prepare, run, SERVE_HINT, stuckWrites } from "./start.js";
export { exitStatusOf, StopCause, type StopRequests, watchStopRequests } from "./stop-requests.js";
