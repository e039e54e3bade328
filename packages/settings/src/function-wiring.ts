/**
 * What terraform/modules/pipeline/function-environment.json declares of each function's environment: the
 * variables wired to a resource or a setting, and the tuning variables, by function. The settings schema
 * reads it to refuse a free-form variable that would shadow one of them (schema.ts); the environments built
 * from it for a stack are function-environment.ts's.
 */
import declaration from "../../../terraform/modules/pipeline/function-environment.json" with { type: "json" };
import { FUNCTION_KEYS, type FunctionKey } from "./resource-names.js";
import { type Tuning, testToolsOffered } from "./tuning.js";

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
 * setting (lint:config reads a live environment with it, tf-check holds what Terraform applied to it).
 */
export const testTools = {
  functions: FUNCTION_KEYS.filter((fn) => Object.values(wiredVariables(fn)).includes("test_tools")),
  variable(fn: FunctionKey): string | undefined {
    return Object.entries(wiredVariables(fn)).find(([, source]) => source === "test_tools")?.[0];
  },
  value(on: boolean): string {
    return declaration.sources.test_tools.values[on ? "true" : "false"];
  },
  isOn: testToolsOffered,
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
