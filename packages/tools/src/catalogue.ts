import type { RegisteredTool } from "@mcp-pipeline/tool-registry";
import type { ToolsConfig } from "./config.js";
import { httpRequest } from "./http-request.js";
import { latency } from "./latency.js";
import { textStats } from "./text-stats.js";

/**
 * Every tool the workers run. To add one: write `src/<your-tool>.ts` with `defineTool` (see
 * text-stats.ts for the smallest example) and add it to this list.
 */
export function createTools(config: ToolsConfig): RegisteredTool[] {
  return [
    textStats as RegisteredTool,
    latency as RegisteredTool,
    ...(config.HTTP_TOOL_BASE_URL
      ? [httpRequest(config.HTTP_TOOL_BASE_URL, config.HTTP_TOOL_TIMEOUT_MS)]
      : []),
  ];
}

/**
 * Every tool a worker may offer, optional ones included: what scripts/generate-tool-validators.ts
 * compiles. The base URL only names the downstream; no schema depends on it.
 */
export function allTools(): RegisteredTool[] {
  return createTools({ HTTP_TOOL_BASE_URL: "http://localhost", HTTP_TOOL_TIMEOUT_MS: 5_000 });
}
