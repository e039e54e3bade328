import * as s from "@mcp-pipeline/contracts/light-schema";

/**
 * Settings the tools read from the function's environment. Hand-written field rules, not zod, for the
 * workers' cold start (docs/benchmarks/cold-start.md); test/config.test.ts holds them to the zod schema.
 */
export const toolsConfigSchema = s.object({
  /** Where `http.request` sends its calls. Without it, the tool is not offered. */
  HTTP_TOOL_BASE_URL: s.optional(s.httpUrl()),
  HTTP_TOOL_TIMEOUT_MS: s.withDefault(s.integer({ coerce: true, min: 1, max: 900_000 }), 5_000),
});
export type ToolsConfig = s.Output<typeof toolsConfigSchema.shape>;
