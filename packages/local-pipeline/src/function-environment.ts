/**
 * Each function's environment in the local stack, as terraform/modules/pipeline sets it: the free-form
 * `environment` setting, the tuning settings' variables (terraform.tfvars.json, durations in ms divided by
 * the time scale) and the resources it is wired to. scripts/test/function-environment.test.ts holds the
 * variables set here to those the module sets, function by function.
 */
import {
  type EnvironmentSettings,
  type ResourceNames,
  type TunedFunction,
  tuningVariables,
} from "@mcp-pipeline/settings";
import type { QueueHandle, QueueRole } from "./resources.js";

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
  const { settings, names: n, queues } = inputs;
  const fn = settings[SETTINGS_KEY[name]];
  const variables = { ...fn.environment, ...tuningVariables(SETTINGS_KEY[name], fn) };
  const scaled = Object.fromEntries(
    Object.entries(variables).map(([k, v]) =>
      k.endsWith("_MS") && /^\d+$/.test(v) ? [k, String(inputs.scale(Number(v)))] : [k, v],
    ),
  );
  const worker = (dlq: QueueHandle, maxReceiveCount: number) => ({
    TOOL_CALLS_TABLE: n.toolCallsTable,
    DEDUPE_TABLE: n.dedupeTable,
    RESULTS_BUCKET: n.resultsBucket,
    EVENTS_STREAM_NAME: n.stream,
    DEAD_LETTER_QUEUE_URL: dlq.url,
    // The source queue's maxReceiveCount: a job failing at that receive is recorded dead-lettered.
    MAX_RECEIVE_COUNT: String(maxReceiveCount),
    // The environment's test_tools setting, as Terraform passes it (the local stack turns it on anyway).
    TEST_TOOLS: settings.test_tools ? "on" : "off",
  });
  const own: Record<FunctionName, Record<string, string>> = {
    processor: { TOOL_CALLS_TABLE: n.toolCallsTable, QUARANTINE_BUCKET: n.quarantineBucket },
    "tool-worker": worker(queues.toolJobsDlq, settings.tool_worker.queue.max_receive_count),
    "fifo-worker": worker(queues.sessionJobsDlq, settings.fifo_worker.queue.max_receive_count),
    "dlq-redrive": {
      QUARANTINE_BUCKET: n.quarantineBucket,
      STREAM_NAME: n.stream,
      DEAD_LETTER_QUEUE_URL: queues.streamFailuresDlq.url,
    },
  };
  return { ...scaled, ...own[name] };
}
