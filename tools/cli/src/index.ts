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
