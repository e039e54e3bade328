import * as s from "@mcp-pipeline/contracts/light-schema";
// The tuning variables' ranges and defaults are their settings' (terraform.tfvars.json), declared once.
import { functionTuning, sdkRetryFields, tuningField } from "@mcp-pipeline/settings/tuning";

const tuning = functionTuning("processor");

// light-schema, not zod: zod's load time is a large part of a cold start's own code
// (docs/benchmarks/cold-start.md).

/**
 * The processor's environment, set by terraform/modules/function and by the local runtime.
 * No dedupe table: the processor's effect is a join and is its own idempotency (docs/idempotency.md).
 * A DEDUPE_TABLE variable left in the environment is ignored.
 */
export const processorConfigSchema = s.object({
  TOOL_CALLS_TABLE: s.text({ min: 3, max: 255 }),
  QUARANTINE_BUCKET: s.text({ min: 3, max: 63 }),
  /** Partition keys processed at once within a batch. */
  PROCESSOR_CONCURRENCY: tuningField(tuning.concurrency),
  /**
   * Stop starting records when less than this much of the invocation remains. Must exceed the
   * slowest call write (a conditional write, plus a re-read and rewrite after a lost race) so that
   * what is in flight can still finish.
   */
  DEADLINE_MARGIN_MS: tuningField(tuning.deadline_margin_ms),
  ...sdkRetryFields(tuning),
});

export type ProcessorConfig = s.Output<typeof processorConfigSchema.shape>;
