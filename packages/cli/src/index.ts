export {
  ExitCode,
  fraction,
  parseCommandLine,
  refuseCommandLine,
  runIfMain,
  UsageError,
  wholeNumber,
} from "./cli.js";
