import { z } from "zod";

/** The processor's environment, set by terraform/modules/function and by the local runtime. */
export const processorConfigSchema = z.object({
  TOOL_CALLS_TABLE: z.string().min(3).max(255),
  DEDUPE_TABLE: z.string().min(3).max(255),
  QUARANTINE_BUCKET: z.string().min(3).max(63),
  /** Partition keys processed at once within a batch. */
  PROCESSOR_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  /**
   * Stop starting records when less than this much of the invocation remains. Must exceed the
   * slowest record (claim + write + complete) so that what is in flight can still finish.
   */
  DEADLINE_MARGIN_MS: z.coerce.number().int().min(0).max(900_000).default(5_000),
  /** How long a processed eventId is remembered: longer than stream retention plus any replay window. */
  IDEMPOTENCY_RETENTION_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .default(14 * 24 * 3600),
});

export type ProcessorConfig = z.infer<typeof processorConfigSchema>;
