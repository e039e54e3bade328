export { ResponseTooLargeError } from "./bounded-body.js";
export { allTools, type CatalogueConfig, createTools } from "./catalogue.js";
export {
  DEFAULT_MAX_RESPONSE_BYTES,
  isPlainBaseUrl,
  MAX_RESPONSE_BYTES_LIMIT,
  PLAIN_BASE_URL_MESSAGE,
  type ToolsConfig,
  toolsConfigSchema,
} from "./config.js";
export {
  DownstreamPathError,
  DownstreamRedirectError,
  PathRefusal,
  resolveJobPath,
} from "./downstream-url.js";
export {
  DownstreamStatusError,
  type HttpRequestArgs,
  type HttpRequestResult,
  MAX_REDIRECTS,
} from "./http-request.js";
export { inputValidators } from "./input-validators.js";
export { type LatencyArgs, latency } from "./latency.js";
export { catalogueRegistry } from "./registry.js";
export { textStats } from "./text-stats.js";
