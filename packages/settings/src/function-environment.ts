/**
 * Each function's environment as terraform/modules/pipeline/function-environment.json declares it: the
 * free-form `environment` setting, the tuning fields' variables and the variables wired to a resource or a
 * setting. main.tf builds the same from the same file; the local pipeline calls this with its own
 * resources, and tf:check holds what Terraform applied to it (tools/terraform/src/tf-check/assertions.ts).
 */
import declaration from "../../../terraform/modules/pipeline/function-environment.json" with { type: "json" };
import { FUNCTION_KEYS, type FunctionKey, type ResourceNames } from "./resource-names.js";
import type { EnvironmentSettings } from "./schema.js";
import { type Tuning, tuningVariables } from "./tuning.js";

/** What a wired variable can be set from (the declaration's `sources`). */
export type WiringSource = keyof typeof declaration.sources;
export const WIRING_SOURCES = Object.keys(declaration.sources) as WiringSource[];

/** The variables wired to a source, by function: `{ TOOL_CALLS_TABLE: "tool_calls_table", ... }`. */
export function wiredVariables(fn: FunctionKey): Readonly<Record<string, string>> {
  return declaration.functions[fn].wired;
}

/**
 * The `test_tools` setting as the functions see it, in one place: the functions wired to it, the variable
 * each reads it from, the value the setting gives, and what a deployed function's value says of the
 * setting (config-lint reads a live environment with it, tf-check holds what Terraform applied to it).
 */
export const testTools = {
  functions: FUNCTION_KEYS.filter((fn) => Object.values(wiredVariables(fn)).includes("test_tools")),
  variable(fn: FunctionKey): string | undefined {
    return Object.entries(wiredVariables(fn)).find(([, source]) => source === "test_tools")?.[0];
  },
  value(on: boolean): string {
    return declaration.sources.test_tools.values[on ? "true" : "false"];
  },
  isOn(value: string | undefined): boolean {
    return value === declaration.sources.test_tools.values.true;
  },
};

/** What sets a declared variable: one of the function's tuning settings, or a wired source. */
export type DeclaredVariable =
  | { readonly from: "setting"; readonly field: string }
  | { readonly from: "source"; readonly source: string };

/** The variables the pipeline sets for `fn` (its tuning and wired variables), with what sets each. */
export function declaredVariables(fn: FunctionKey): Map<string, DeclaredVariable> {
  const tuning: Readonly<Record<string, Tuning>> = declaration.functions[fn].tuning;
  const set: [string, DeclaredVariable][] = [
    ...Object.entries(tuning).map(([field, t]): [string, DeclaredVariable] => [
      t.variable,
      { from: "setting", field },
    ]),
    ...Object.entries(wiredVariables(fn)).map(([variable, source]): [string, DeclaredVariable] => [
      variable,
      { from: "source", source },
    ]),
  ];
  return new Map(set);
}

export interface WiringInputs {
  readonly settings: EnvironmentSettings;
  readonly names: ResourceNames;
  /** The URL of the DLQ of the queue the function consumes (every function but the processor). */
  readonly deadLetterQueueUrl?: string;
}

/** A source's value for `fn`; a source the function has not (a DLQ for the processor) is an error. */
function sourceValue(fn: FunctionKey, source: string, inputs: WiringInputs): string {
  const { settings, names } = inputs;
  const queue = fn === "processor" ? undefined : settings[fn].queue;
  const values: Readonly<Record<WiringSource, string | undefined>> = {
    tool_calls_table: names.toolCallsTable,
    dedupe_table: names.dedupeTable,
    results_bucket: names.resultsBucket,
    quarantine_bucket: names.quarantineBucket,
    stream: names.stream,
    "queue.dlq_url": inputs.deadLetterQueueUrl,
    "queue.max_receive_count": queue === undefined ? undefined : String(queue.max_receive_count),
    test_tools: testTools.value(settings.test_tools),
  };
  const value = values[source as WiringSource];
  if (value === undefined)
    throw new Error(
      `function-environment.json: ${fn} is wired to "${source}", which ${
        source in values ? `${fn} has no value for` : `is not one of ${WIRING_SOURCES.join(", ")}`
      }`,
    );
  return value;
}

/**
 * `fn`'s wired variables from the value of each source it is wired to, for a stack that has its own
 * resources (the handlers' integration tests): each variable named as the declaration names it. A source
 * given as `undefined` leaves its variable unset (a test queue without a redrive policy has no
 * maxReceiveCount); a source `fn` is wired to that `values` does not name at all is an error, so a
 * variable added to the declaration reaches every stack or fails it.
 */
export function wiredEnvironment(
  fn: FunctionKey,
  values: Readonly<Partial<Record<WiringSource, string | undefined>>>,
): Record<string, string> {
  const missing = Object.values(wiredVariables(fn)).filter((source) => !(source in values));
  if (missing.length > 0)
    throw new Error(
      `function-environment.json: ${fn} is wired to ${missing.join(", ")}, which the stack does not give`,
    );
  const environment: Record<string, string> = {};
  for (const [variable, source] of Object.entries(wiredVariables(fn))) {
    const value = values[source as WiringSource];
    if (value !== undefined) environment[variable] = value;
  }
  return environment;
}

/** The environment Terraform sets for `fn`, with the resources of `inputs`. */
export function functionEnvironment(fn: FunctionKey, inputs: WiringInputs): Record<string, string> {
  const own = inputs.settings[fn];
  return {
    ...own.environment,
    ...tuningVariables(fn, own),
    ...Object.fromEntries(
      Object.entries(wiredVariables(fn)).map(([variable, source]) => [
        variable,
        sourceValue(fn, source, inputs),
      ]),
    ),
  };
}
