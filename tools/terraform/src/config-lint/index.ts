export { main, readWiring } from "./lint-config.js";
export { LiveReadError, LiveReadProblem, liveReadError, liveSettings } from "./live.js";
export {
  type Finding,
  type FunctionKey,
  RuleId,
  settingsFindings,
  TOLERATED_SLOWDOWN,
  type Wiring,
  wiringFindings,
} from "./rules.js";
