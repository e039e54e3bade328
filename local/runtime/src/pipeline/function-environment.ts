/**
 * Each function's environment in the local stack: what terraform/modules/pipeline/function-environment.json
 * declares (@mcp-pipeline/settings' functionEnvironment, which main.tf's environments follow too), with this
 * stack's resources, and durations in ms divided by the time scale.
 */
import {
  functionEnvironment as declaredEnvironment,
  type EnvironmentSettings,
  QUEUE_KEYS,
  type ResourceNames,
  type TunedFunction,
} from "@mcp-pipeline/settings";
import { type QueueHandle, type QueueRole, queueRoles } from "./resources.js";

export const FUNCTION_NAMES = ["processor", "tool-worker", "fifo-worker", "dlq-redrive"] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];
/** A function's settings in terraform.tfvars.json. */
export const SETTINGS_KEY = {
  processor: "processor",
  "tool-worker": "tool_worker",
  "fifo-worker": "fifo_worker",
  "dlq-redrive": "dlq_redrive",
} as const satisfies Record<FunctionName, TunedFunction>;

export interface EnvironmentInputs {
  readonly settings: EnvironmentSettings;
  readonly names: ResourceNames;
  readonly queues: Readonly<Record<QueueRole, QueueHandle>>;
  /** A duration in ms as the local run scales it. */
  readonly scale: (ms: number) => number;
}

/** The variables Terraform sets for `name`, with this stack's resources. */
export function functionEnvironment(name: FunctionName, inputs: EnvironmentInputs): Record<string, string> {
  const key = SETTINGS_KEY[name];
  // The queue the function consumes (resource-names.json names each queue's consumer): none for the processor.
  const consumed = QUEUE_KEYS.find((queue) => inputs.names.queues[queue].consumer === key);
  const declared = declaredEnvironment(key, {
    settings: inputs.settings,
    names: inputs.names,
    ...(consumed === undefined ? {} : { deadLetterQueueUrl: inputs.queues[queueRoles(consumed).dlq].url }),
  });
  return Object.fromEntries(
    Object.entries(declared).map(([k, v]) =>
      k.endsWith("_MS") && /^\d+$/.test(v) ? [k, String(inputs.scale(Number(v)))] : [k, v],
    ),
  );
}
