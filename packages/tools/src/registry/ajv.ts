import Ajv2020, { type Options } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { SchemaCompiler } from "./validator.js";

/**
 * The Ajv that checks tools' arguments, at start-up (`compileWithAjv`) and at build time (the standalone
 * code of scripts/generate-tool-validators.ts): one set of options, so both give the same verdicts and
 * errors. A subpath of its own (`@mcp-pipeline/tools/registry/ajv`), not an index export, so that a bundle
 * running validators compiled at build time never loads Ajv (docs/benchmarks/cold-start.md).
 */
export function createAjv(extra: Options = {}): Ajv2020 {
  // Strict mode refuses unknown keywords and ambiguous schemas: a typo in a schema is an error, not a
  // silently looser check.
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    coerceTypes: false,
    useDefaults: false,
    ...extra,
  });
  addFormats(ajv);
  return ajv;
}

/**
 * Compiles each tool's inputSchema when the registry is built (JSON Schema draft 2020-12, formats
 * included): for tools defined at run time and for tests. Throws Ajv's reason for a schema that does not
 * compile.
 */
export function compileWithAjv(): SchemaCompiler {
  const ajv = createAjv();
  return (tool) => ajv.compile(tool.inputSchema);
}
