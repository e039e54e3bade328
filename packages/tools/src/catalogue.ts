import { TEST_TOOLS_VALUES, testToolsOffered } from "@mcp-pipeline/settings/tuning";
import type { RegisteredTool } from "@mcp-pipeline/tools/registry";
import type { ToolsConfig } from "./config.js";
import { httpRequest } from "./http-request.js";
import { latency } from "./latency.js";
import { textStats } from "./text-stats.js";

/** What the catalogue reads of the configuration; defaults as toolsConfigSchema gives them. */
export type CatalogueConfig = Pick<ToolsConfig, "HTTP_TOOL_TIMEOUT_MS"> &
  Partial<Pick<ToolsConfig, "HTTP_TOOL_BASE_URL" | "HTTP_TOOL_MAX_RESPONSE_BYTES" | "TEST_TOOLS">>;

/**
 * Every tool the workers run. To add one: write `src/<your-tool>.ts` with `defineTool` (see
 * text-stats.ts for the smallest example) and add it to this list. A tool for tests only (a job decides
 * what it does) goes with `latency`, offered only where the environment's
 * `test_tools` setting is true (TEST_TOOLS, config.ts).
 */
export function createTools(config: CatalogueConfig): RegisteredTool[] {
  return [
    textStats as RegisteredTool,
    ...(testToolsOffered(config.TEST_TOOLS) ? [latency as RegisteredTool] : []),
    ...(config.HTTP_TOOL_BASE_URL
      ? [
          httpRequest({
            baseUrl: config.HTTP_TOOL_BASE_URL,
            timeoutMs: config.HTTP_TOOL_TIMEOUT_MS,
            ...(config.HTTP_TOOL_MAX_RESPONSE_BYTES !== undefined
              ? { maxResponseBytes: config.HTTP_TOOL_MAX_RESPONSE_BYTES }
              : {}),
          }),
        ]
      : []),
  ];
}

/**
 * Every tool a worker may offer, optional ones included: what scripts/generate-tool-validators.ts
 * compiles. The base URL only names the downstream; no schema depends on it.
 */
export function allTools(): RegisteredTool[] {
  return createTools({
    HTTP_TOOL_BASE_URL: "http://localhost",
    HTTP_TOOL_TIMEOUT_MS: 5_000,
    TEST_TOOLS: TEST_TOOLS_VALUES.true,
  });
}
