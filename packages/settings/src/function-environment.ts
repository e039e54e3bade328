/**
 * Each function's environment as terraform/modules/pipeline/function-environment.json declares it: the
 * free-form `environment` setting, the tuning fields' variables and the variables wired to a resource or a
 * setting. main.tf builds the same from the same file; the local pipeline calls this with its own
 * resources, and tf:check holds what Terraform applied to it (tools/terraform/src/tf-check/assertions.ts).
 */
import { testTools, WIRING_SOURCES, type WiringSource, wiredVariables } from "./function-wiring.js";
import type { FunctionKey, ResourceNames } from "./resource-names.js";
import type { EnvironmentSettings } from "./schema.js";
import { tuningVariables } from "./tuning.js";

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
