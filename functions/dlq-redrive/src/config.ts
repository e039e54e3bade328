import { sqsQueueUrlSchema, streamNameSchema } from "@mcp-pipeline/aws";
import * as z from "zod";

const queueUrl = sqsQueueUrlSchema;

/** dlq-redrive's environment, set by terraform/modules/pipeline and by the local runtime. */
export const redriveConfigSchema = z.object({
  QUARANTINE_BUCKET: z.string().min(3).max(63),
  /** The stream that failed records are re-read from and replayed into. */
  STREAM_NAME: streamNameSchema,
  /** The failure queue's own DLQ: messages that are not on-failure records are kept there. */
  DEAD_LETTER_QUEUE_URL: queueUrl,
  REDRIVE_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /**
   * Quarantine PUTs in flight per failure record. A failure record covers ParallelizationFactor x
   * BatchSize records (prod: 4 x 200 = 800); one at a time at ~20-50 ms a PUT would take 16-40 s.
   */
  QUARANTINE_PUT_CONCURRENCY: z.coerce.number().int().min(1).max(128).default(32),
  DEADLINE_MARGIN_MS: z.coerce.number().int().min(0).max(900_000).default(10_000),
});

export type RedriveConfig = z.infer<typeof redriveConfigSchema>;

/** What a manual invocation (console, `aws lambda invoke`) may ask for. */
export const manualActionSchema = z.discriminatedUnion("action", [
  z.object({
    action: z.literal("replay"),
    filter: z
      .object({
        reason: z.string().optional(),
        since: z.iso.datetime().optional(),
        until: z.iso.datetime().optional(),
        session: z.string().optional(),
        shardId: z.string().optional(),
      })
      .default({}),
    dryRun: z.boolean().default(true),
    ratePerSecond: z.number().int().min(1).max(1_000).default(100),
  }),
  z.object({
    action: z.literal("redrive-dlq"),
    dlqUrl: queueUrl,
    sourceUrl: queueUrl,
    dryRun: z.boolean().default(true),
    ratePerSecond: z.number().int().min(1).max(500).optional(),
  }),
]);

export type ManualAction = z.infer<typeof manualActionSchema>;
