import * as s from "@mcp-pipeline/contracts/light-schema";
// The tuning variables' ranges and defaults are their settings' (terraform.tfvars.json), declared once.
import { functionTuning, tuningField } from "@mcp-pipeline/settings/tuning";

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
  /**
   * The bases of the AWS SDK's retry backoff after a transient and after a throttling error
   * (@mcp-pipeline/aws's sdk-retry.ts): the SDK's own by default, declared so that the local stack scales them.
   */
  SDK_RETRY_BASE_MS: tuningField(tuning.sdk_retry_base_ms),
  SDK_THROTTLE_RETRY_BASE_MS: tuningField(tuning.sdk_throttle_retry_base_ms),
});

export type ProcessorConfig = s.Output<typeof processorConfigSchema.shape>;
