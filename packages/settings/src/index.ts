export { functionEnvironment, type WiringInputs } from "./function-environment.js";
export {
  type DeclaredVariable,
  declaredVariables,
  testTools,
  WIRING_SOURCES,
  type WiringSource,
  wiredEnvironment,
  wiredVariables,
} from "./function-wiring.js";
export { loadSettings, loadSettingsFile, parseSettings, SettingsError, settingsFile } from "./load.js";
export {
  DEFAULT_APPLICATION_LOG_LEVEL,
  FUNCTION_LOGGING,
  FUNCTION_TRACING_ACTIVE,
  type FunctionLoggingDeclaration,
  QUEUE_ATTRIBUTES,
  type QueueAttributes,
} from "./module-attributes.js";
export {
  FUNCTION_KEYS,
  type FunctionKey,
  QUEUE_KEYS,
  type QueueKey,
  type QueueNames,
  queueSuffix,
  queueUrlVariables,
  type ResourceNames,
  resourceNames,
  type SqsConsumerKey,
} from "./resource-names.js";
export {
  ENVIRONMENT_NAME,
  type EnvironmentSettings,
  environmentSettingsSchema,
  type FunctionSettings,
  type KinesisEsmSettings,
  kinesisEsmSchema,
  type QuarantineSettings,
  type QueueSettings,
  quarantineSettingsSchema,
  queueSettingsSchema,
  type SqsEsmSettings,
  sqsEsmSchema,
} from "./schema.js";
export {
  functionTuning,
  MAX_RECEIVE_COUNT,
  TUNING,
  type TunedFunction,
  type Tuning,
  tuningVariables,
} from "./tuning.js";
