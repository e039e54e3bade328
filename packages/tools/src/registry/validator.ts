import type { RegisteredTool } from "./tool.js";

/** What a validator reports per problem: the fields of Ajv's ErrorObject that the registry reads. */
export interface ValidationError {
  /** JSON Pointer to the offending value, "" for the arguments object itself. */
  readonly instancePath: string;
  readonly keyword: string;
  readonly params: Record<string, unknown>;
  readonly message?: string;
}

/**
 * A tool's argument check: true when the arguments satisfy its inputSchema, else false with `errors` set.
 * The shape of Ajv's ValidateFunction, whether compiled at start-up or at build time (standalone code).
 */
export interface ArgumentValidator {
  (args: unknown): boolean;
  errors?: readonly ValidationError[] | null;
}

/**
 * Gives the registry each tool's validator; throws when the tool's inputSchema has none (a schema that does
 * not compile, or no build-time validator for it). `compileWithAjv` (`@mcp-pipeline/tools/registry/ajv`)
 * compiles at start-up; `precompiledValidators` looks up code compiled at build time.
 */
export type SchemaCompiler = (tool: RegisteredTool) => ArgumentValidator;

/** A module of validators compiled at build time: validators and the schema text each was compiled from. */
export interface PrecompiledValidators {
  readonly validators: Readonly<Record<string, ArgumentValidator>>;
  /** `JSON.stringify` of the inputSchema each validator was compiled from, by tool name. */
  readonly schemas: Readonly<Record<string, string>>;
}

/**
 * Validators compiled at build time from the tools' inputSchemas (Ajv standalone code), so that a
 * worker's cold start neither loads nor runs Ajv's compiler. Refuses a tool whose schema is not the one
 * its validator was compiled from: a schema changed without regenerating stops the function at
 * start-up instead of checking arguments against the old schema.
 */
export function precompiledValidators(compiled: PrecompiledValidators): SchemaCompiler {
  return (tool) => {
    const validate = Object.hasOwn(compiled.validators, tool.name)
      ? compiled.validators[tool.name]
      : undefined;
    const schema = Object.hasOwn(compiled.schemas, tool.name) ? compiled.schemas[tool.name] : undefined;
    if (validate === undefined || schema === undefined) {
      throw new Error("no validator was compiled for it at build time (run npm run generate:validators)");
    }
    if (schema !== JSON.stringify(tool.inputSchema)) {
      throw new Error(
        "its validator was compiled from another version of its inputSchema (run npm run generate:validators)",
      );
    }
    return validate;
  };
}
