// The local runtime's whole public API: Lambda's event source mappings and sandboxes (esm/), and the
// pipeline of npm start on them (pipeline/).
export { type BatchResponseReading, readBatchResponse } from "./esm/batch-response.js";
export { RequestAbandonedError, sendWithin } from "./esm/bounded-request.js";
export type { Invokable } from "./esm/invokable.js";
export {
  eventRecordBytes,
  kinesisEventRecord,
  MAX_PAYLOAD_BYTES,
  type ShardRecord,
  type StreamIdentity,
} from "./esm/kinesis/event.js";
export { FailureCondition, failureRecord, type KinesisFailureRecord } from "./esm/kinesis/failure-record.js";
export {
  InvalidEsmOptionError,
  PartialSplitAccounting,
} from "./esm/kinesis/partial-split-accounting.js";
export {
  type KinesisEsmEvent,
  type KinesisEsmOperation,
  type KinesisEsmOptions,
  type KinesisEsmParameters,
  type KinesisEsmStats,
  KinesisEventSource,
  laneOf,
} from "./esm/kinesis/poller.js";
export {
  assertNoReservedVariables,
  type FunctionCode,
  type FunctionDefinition,
  type FunctionLogging,
  type InvokeResult,
  LocalFunction,
  type LogSink,
  RESERVED_VARIABLES,
  ReservedVariableError,
  runtimeVariables,
  type SentRequest,
} from "./esm/lambda/local-function.js";
export { NotAZipError, unpackTo, unzip, unzipTo } from "./esm/lambda/unzip.js";
export {
  type SqsEsmEvent,
  type SqsEsmOperation,
  type SqsEsmOptions,
  type SqsEsmParameters,
  type SqsEsmStats,
  SqsEventSource,
  VisibilityTimeoutError,
} from "./esm/sqs/poller.js";
export { type CliOptions, DEFAULT_REPORT, parseCli, TIMED_OUT, USAGE } from "./pipeline/cli.js";
export { type DrainedMessage, drainQueue, peekQueue } from "./pipeline/drain-queue.js";
export {
  DRILL_SIZE,
  DrillNotReadyError,
  type DrillPlan,
  drillBriefing,
  planDrill,
  setUpDrill,
  watchDownstream,
} from "./pipeline/drill.js";
export {
  checkDrill,
  type DrillClients,
  DrillOutcome,
  type DrillVerdict,
  formatDrillVerdict,
  type JudgedInput,
  nameOf,
} from "./pipeline/drill-check.js";
export { DRILL_CHECK_USAGE, drillCheckMain } from "./pipeline/drill-check-cli.js";
export { type DrillDownstream, startDrillDownstream } from "./pipeline/drill-downstream.js";
export {
  DRILL_LEDGER_FORMAT,
  DrillExpectation,
  type DrillInput,
  type DrillLedger,
  DrillLedgerError,
  type DrillQueue,
  readDrillLedger,
  writeDrillLedger,
} from "./pipeline/drill-ledger.js";
export {
  type EnvironmentInputs,
  FUNCTION_NAMES,
  functionEnvironment,
  SETTINGS_KEY,
} from "./pipeline/function-environment.js";
export { shownByVerbose } from "./pipeline/function-logs.js";
export {
  FunctionPackageError,
  LOCAL_RUNTIME,
  readDistManifest,
  type UnpackedFunction,
  unpackFunction,
} from "./pipeline/function-package.js";
export { listGivenUp } from "./pipeline/given-up.js";
export {
  describePartialSplits,
  type PartialSplits,
  partialSplitAccountingOption,
} from "./pipeline/partial-splits.js";
export {
  type Endpoints,
  endpointsFromEnvironment,
  type FunctionName,
  type InvokeFunction,
  LocalPipeline,
  type PipelineOptions,
} from "./pipeline/pipeline.js";
export type { ProcessorTrafficCounts } from "./pipeline/processor-traffic.js";
export { queueDepth } from "./pipeline/queue-depth.js";
export {
  judgeRepresentative,
  type LoadFigures,
  type Representativeness,
} from "./pipeline/representative.js";
export {
  createLocalResources,
  type LocalResources,
  type QueueHandle,
  type QueueRole,
  queueAttributes,
  type ResourceClients,
} from "./pipeline/resources.js";
export { type Progress, runScenario, type Summary } from "./pipeline/run-scenario.js";
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
} from "./pipeline/scenario.js";
export {
  HELP_COMMAND,
  main,
  type Prepared,
  prepare,
  run,
  SERVE_HINT,
  stuckWrites,
} from "./pipeline/start.js";
export { exitStatusOf, StopCause, type StopRequests, watchStopRequests } from "./pipeline/stop-requests.js";
