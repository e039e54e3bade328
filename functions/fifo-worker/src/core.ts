import { ToolRegistry } from "@mcp-pipeline/tool-registry";
import { createTools, inputValidators, type ToolsConfig } from "@mcp-pipeline/tools";

// The core is the worker's (packages/worker: processToolCallJobs); what is fifo-worker's own is the tools it runs.
export { processToolCallJobs } from "@mcp-pipeline/worker";

/** The catalogue's tools, configured from the environment, with their input validators compiled at build time. */
export const toolRegistry = (config: ToolsConfig): ToolRegistry =>
  new ToolRegistry(createTools(config), inputValidators);
