import { precompiledValidators, type SchemaCompiler } from "@mcp-pipeline/tools/registry";
import * as compiled from "./input-validators.generated.js";

/**
 * The tools' argument validators, compiled at build time (`npm run generate:validators`): what the workers
 * give their ToolRegistry, so that a cold start neither loads nor runs Ajv's compiler. A tool whose
 * inputSchema changed since is refused at start-up (ToolDefinitionError).
 */
export const inputValidators: SchemaCompiler = precompiledValidators(compiled);
