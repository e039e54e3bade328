import { en } from "zod/locales";
import * as z from "zod/mini";

// zod/mini, not zod's full build: this schema is the only zod on the processor's path, and the full
// build's load time is most of a cold start's own code (docs/benchmarks/cold-start.md). zod/mini
// installs no messages of its own; the English ones keep ConfigError as readable as before.
z.config(en());

const tableName = z.string().check(z.minLength(3), z.maxLength(255));

/**
 * The processor's environment, set by terraform/modules/function and by the local runtime.
 * No dedupe table: the processor's effect is a join and is its own idempotency (docs/idempotency.md).
 * A DEDUPE_TABLE variable left in the environment is ignored.
 */
export const processorConfigSchema = z.object({
  TOOL_CALLS_TABLE: tableName,
  QUARANTINE_BUCKET: z.string().check(z.minLength(3), z.maxLength(63)),
  /** Partition keys processed at once within a batch. */
  PROCESSOR_CONCURRENCY: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(256)), 16),
  /**
   * Stop starting records when less than this much of the invocation remains. Must exceed the
   * slowest call write (a conditional write, plus a re-read and rewrite after a lost race) so that
   * what is in flight can still finish.
   */
  DEADLINE_MARGIN_MS: z._default(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(900_000)), 5_000),
});

export type ProcessorConfig = z.infer<typeof processorConfigSchema>;
