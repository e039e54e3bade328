export { allTools, createTools } from "./catalogue.js";
export { type ToolsConfig, toolsConfigSchema } from "./config.js";
export { DownstreamStatusError, type HttpRequestArgs, type HttpRequestResult } from "./http-request.js";
export { inputValidators } from "./input-validators.js";
export { type LatencyArgs, latency } from "./latency.js";
export { catalogueRegistry } from "./registry.js";
export { textStats } from "./text-stats.js";
