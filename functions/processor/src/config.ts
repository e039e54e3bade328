import { z } from "zod";

/**
 * The processor's environment, set by terraform/modules/function and by the local runtime.
 * No dedupe table: the processor's effect is a join and is its own idempotency (docs/idempotency.md).
 * A DEDUPE_TABLE variable left in the environment is ignored.
 */
export const processorConfigSchema = z.object({
  TOOL_CALLS_TABLE: z.string().min(3).max(255),
  QUARANTINE_BUCKET: z.string().min(3).max(63),
  /** Partition keys processed at once within a batch. */
  PROCESSOR_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  /**
   * Stop starting records when less than this much of the invocation remains. Must exceed the
   * slowest call write (a conditional write, plus a re-read and rewrite after a lost race) so that
   * what is in flight can still finish.
   */
  DEADLINE_MARGIN_MS: z.coerce.number().int().min(0).max(900_000).default(5_000),
});

export type ProcessorConfig = z.infer<typeof processorConfigSchema>;
