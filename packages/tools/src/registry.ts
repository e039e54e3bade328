import { ToolRegistry } from "@mcp-pipeline/tool-registry";
import { createTools } from "./catalogue.js";
import type { ToolsConfig } from "./config.js";
import { inputValidators } from "./input-validators.js";

/**
 * The registry a worker function runs: the catalogue's tools, configured from the environment, with
 * their input validators compiled at build time (so no schema compiler is bundled).
 */
export function catalogueRegistry(config: ToolsConfig): ToolRegistry {
  return new ToolRegistry(createTools(config), inputValidators);
}
