export {
  ExitCode,
  fraction,
  parseCommandLine,
  refuseCommandLine,
  runIfMain,
  shown,
  UsageError,
  wholeNumber,
} from "./cli.js";
