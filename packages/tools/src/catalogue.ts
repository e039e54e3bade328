import type { RegisteredTool } from "@mcp-pipeline/tool-registry";
import * as z from "zod";
import { httpRequest } from "./http-request.js";
import { latency } from "./latency.js";
import { textStats } from "./text-stats.js";

/** Settings the tools read from the function's environment. */
export const toolsConfigSchema = z.object({
  /** Where `http.request` sends its calls. Without it, the tool is not offered. */
  HTTP_TOOL_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  HTTP_TOOL_TIMEOUT_MS: z.coerce.number().int().min(1).max(900_000).default(5_000),
});
export type ToolsConfig = z.infer<typeof toolsConfigSchema>;

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
