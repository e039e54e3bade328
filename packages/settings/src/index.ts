export { loadSettings, parseSettings, SettingsError, settingsFile } from "./load.js";
export {
  ENVIRONMENT_NAME,
  type EnvironmentSettings,
  environmentSettingsSchema,
  type FunctionSettings,
  type KinesisEsmSettings,
  kinesisEsmSchema,
  type QueueSettings,
  type SqsEsmSettings,
  sqsEsmSchema,
} from "./schema.js";
