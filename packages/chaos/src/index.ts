export { type CliOptions, main, parseCli, TIMED_OUT, USAGE } from "./cli.js";
export { type DoorCounts, type Effect, effectOfWrite } from "./doors.js";
export { type InvocationFaultCounts, invocationFaults } from "./injector.js";
export {
  type Check,
  compareSequence,
  type FailureRange,
  type FinalState,
  Ledger,
  Phase,
  type StallBounds,
} from "./ledger.js";
export { observeInvocations } from "./observer.js";
export {
  buildPlan,
  type ChaosOptions,
  DEFAULT_RATES,
  type FaultPlan,
  type FaultRates,
  type Schedule,
  schedule,
} from "./plan.js";
export { formatJson, formatTable } from "./report.js";
export { mergeChildren, type ReshardStep, splitOneShard } from "./reshard.js";
export { type ChaosResult, faultsExercised, type RunOptions, runChaos, stallBounds } from "./run.js";
export { type RestartableSqs, startRestartableSqs } from "./sqs-restart.js";
export { TimeoutCause, Watchdog } from "./watchdog.js";
