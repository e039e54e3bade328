import { ToolRegistry } from "@mcp-pipeline/tools/registry";
import { type CatalogueConfig, createTools } from "./catalogue.js";
import { inputValidators } from "./input-validators.js";

/**
 * The registry a worker function runs: the catalogue's tools, configured from the environment, with
 * their input validators compiled at build time (so no schema compiler is bundled).
 */
export function catalogueRegistry(config: CatalogueConfig): ToolRegistry {
  return new ToolRegistry(createTools(config), inputValidators);
}
