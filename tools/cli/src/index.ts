export {
  ExitCode,
  fraction,
  parseCommandLine,
  refuseCommandLine,
  refuseInOneLine,
  runIfMain,
  shown,
  UsageError,
  wholeNumber,
} from "./cli.js";
export {
  LOCAL_RUN_OPTIONS,
  type LocalRunOptions,
  type LocalRunValues,
  localRunOptions,
  seedOption,
  WORKLOAD_OPTIONS,
} from "./local-run.js";
