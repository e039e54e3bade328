export { type ManualAction, manualActionSchema, type RedriveConfig, redriveConfigSchema } from "./config.js";
export { handler, InvalidEventError } from "./handler.js";
