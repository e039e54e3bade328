export { type AwsClients, awsClients, endpointOf, regionOf, unreachable } from "./aws-environment.js";
export {
  bucketChecks,
  type Caller,
  CallerUnknownError,
  callerIdentity,
  environmentChecks,
} from "./caller.js";
export { type CommandLine, main, processIo, readCommandLine, USAGE } from "./cli.js";
export { type Io, RecoverExit } from "./context.js";
export { type WaitingGroup, waitingGroups } from "./fifo-groups.js";
export { type FiringAlarm, firingAlarms, latestMaxima, type MetricReading } from "./metrics.js";
export { commandFor } from "./next-command.js";
export {
  formatSeconds,
  pipelineStatus,
  type QueueStatus,
  type Reading,
  type StatusReport,
  type StatusSources,
  type StuckGroup,
} from "./status.js";
export { type PipelineQueue, pipelineQueues, type Targets, targetsOf } from "./targets.js";
export { type Consent, consent, processTerminal, type Terminal } from "./terminal.js";
export {
  type NextStep,
  type QueueName,
  type TriageDlq,
  type TriageGroup,
  type TriageReport,
  triage,
} from "./triage.js";
