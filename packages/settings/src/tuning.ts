/**
 * The tuning settings of the functions: the field in terraform.tfvars.json, the environment variable the
 * function reads, its range and its default. Declared in terraform/modules/pipeline/function-environment.json,
 * which main.tf reads too; the settings schema (schema.ts) and the Terraform variables generated from it
 * take the ranges and defaults from here, and the functions' config.ts read the variable with these limits.
 * Only the JSON import and no side effects: the functions' bundles include this file (and must not include
 * zod, docs/benchmarks/cold-start.md).
 *
 * Why the declared values are what they are: the minimums of the workers' backoff (the visibility timeout a
 * retried job's message is given, docs/aws-semantics.md §2.6) are 1 ms, not a second, because the local
 * pipeline divides each *_MS setting by its time scale (npm start: 10); dlq-redrive's deadline margin is
 * twice the others' since one on-failure record re-reads a whole sequence range.
 */
import declaration from "../../../terraform/modules/pipeline/function-environment.json" with { type: "json" };

export interface Tuning {
  /** The function's environment variable. */
  readonly variable: string;
  readonly min: number;
  readonly max: number;
  /** The function's value when neither the settings nor its environment set one. */
  readonly default: number;
  readonly description: string;
}

type Declared = typeof declaration.functions;

/** The tuning of each function, by its settings key in terraform.tfvars.json. */
export const TUNING = Object.fromEntries(
  Object.entries(declaration.functions).map(([fn, wiring]) => [fn, wiring.tuning]),
) as { readonly [F in keyof Declared]: Readonly<Declared[F]["tuning"]> };

export type TunedFunction = keyof typeof TUNING;

/**
 * The values of the workers' TEST_TOOLS variable by the environment's `test_tools` setting
 * (`{ true: "on", false: "off" }`): the tools' config reads the variable with them.
 */
export const TEST_TOOLS_VALUES = declaration.sources.test_tools.values;

/** Whether a TEST_TOOLS value offers the test tools (the environment's `test_tools` is true). */
export const testToolsOffered = (value: string | undefined): boolean => value === TEST_TOOLS_VALUES.true;
/** The tuning fields of one function. */
export type FunctionTuningField<F extends TunedFunction> = keyof (typeof TUNING)[F] & string;

/**
 * One function's tuning, by its settings key. A function's bundle holds only its own part of the declaration
 * (tools/bundler projects function-environment.json for each bundle), so a function asks for its own by name,
 * and a name the bundle does not hold fails here, naming what it holds, rather than as an undefined field.
 */
export function functionTuning<F extends TunedFunction>(fn: F): (typeof TUNING)[F] {
  const tuning: (typeof TUNING)[F] | undefined = TUNING[fn];
  if (tuning === undefined) {
    throw new Error(
      `function-environment.json as bundled declares ${Object.keys(TUNING).join(", ") || "no function"}, not ${fn}: ` +
        "a function's bundle holds its own declaration only (tools/bundler)",
    );
  }
  return tuning;
}

/** The range of a worker queue's max_receive_count (MAX_RECEIVE_COUNT): the declaration's, §2.3. */
export const MAX_RECEIVE_COUNT = declaration.sources["queue.max_receive_count"];

/** The environment variables a function gets from its tuning fields: `{ WORKER_CONCURRENCY: "10", ... }`. */
export function tuningVariables<F extends TunedFunction>(
  fn: F,
  values: Readonly<Record<FunctionTuningField<F>, number>>,
): Record<string, string> {
  const fields: Readonly<Record<string, Tuning>> = TUNING[fn];
  return Object.fromEntries(
    Object.entries(fields).map(([field, t]) => [
      t.variable,
      String((values as Readonly<Record<string, number>>)[field]),
    ]),
  );
}
