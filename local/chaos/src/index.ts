export { CallEffects, type WriteRegression } from "./call-effects.js";
export { type CliOptions, main, parseCli, TIMED_OUT, USAGE } from "./cli.js";
export {
  type DiagnosticsFile,
  DiagnosticsFileError,
  diagnose,
  formatTimeline,
  type JobDiagnostics,
  readDiagnostics,
} from "./diagnostics.js";
export {
  type CallWrite,
  callWritesOf,
  type DoorCounts,
  dynamoDbDoor,
  type Effect,
  type EmulatorErrorTouch,
  type FaultTouch,
} from "./doors.js";
export { callIdsIn, type Harness, startHarness } from "./harness.js";
export { type InvocationFaultCounts, invocationFaults } from "./injector.js";
export { compareSequence, type FailureRange, Ledger, Phase, putEventOf, type StreamInput } from "./ledger.js";
export { observeInvocations, observeOutcomes, workerLeaseMs } from "./observer.js";
export {
  compareJobCall,
  compareStreamCall,
  type ExpectedCall,
  expectedCall,
  type PutEvent,
  type TableItem,
} from "./oracle.js";
export {
  buildPlan,
  type ChaosOptions,
  DEFAULT_RATES,
  type FaultPlan,
  type FaultRates,
  type Schedule,
  schedule,
} from "./plan.js";
export { MAX_ROUNDS, type Replay, type RoundTimes } from "./recover.js";
export { formatJson, formatTable } from "./report.js";
export { mergeChildren, type ReshardStep, splitOneShard } from "./reshard.js";
export {
  type ChaosResult,
  faultsExercised,
  type RunOptions,
  type RunPhases,
  RunVerdict,
  recoveryUnderFaults,
  runChaos,
  stallBounds,
  verdictOf,
} from "./run.js";
export { type RestartableSqs, startRestartableSqs } from "./sqs-restart.js";
export { Tally } from "./tally.js";
export {
  explainRerun,
  explainReruns,
  type JobIncident,
  type JobToJudge,
  judgeToolRuns,
  type RerunExplanation,
  RunCause,
  type ToolRunVerdict,
} from "./tool-runs.js";
export { type Check, CheckName, type FinalState, judge, type StallBounds, type Verdict } from "./verdict.js";
export { TimeoutCause, Watchdog } from "./watchdog.js";
export { RunOutcome, startWitness, type Witness, type WitnessEffect, type WitnessRun } from "./witness.js";
