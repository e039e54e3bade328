import * as s from "@mcp-pipeline/contracts/light-schema";
// The tuning variables' ranges and defaults are their settings' (terraform.tfvars.json), declared once.
import { functionTuning, sdkRetryFields, tuningField } from "@mcp-pipeline/settings/tuning";

// light-schema, not zod: zod's full build was an eighth of what dlq-redrive's cold start loaded, for a
// configuration read once and a manual action that is rare (docs/benchmarks/cold-start.md).

const queueUrl = s.sqsQueueUrl();
const tuning = functionTuning("dlq_redrive");

/** dlq-redrive's environment, set by terraform/modules/pipeline and by the local runtime. */
export const dlqRedriveConfigSchema = s.object({
  QUARANTINE_BUCKET: s.text({ min: 3, max: 63 }),
  /** The stream that failed records are re-read from and replayed into. */
  STREAM_NAME: s.streamName(),
  /** The failure queue's own DLQ: messages that are not on-failure records are kept there. */
  DEAD_LETTER_QUEUE_URL: queueUrl,
  /** On-failure records (messages of the failure queue) re-read and quarantined at once. */
  FAILURE_RECORD_CONCURRENCY: tuningField(tuning.concurrency),
  /**
   * Quarantine PUTs in flight per failure record. A failure record covers ParallelizationFactor x
   * BatchSize records (prod: 4 x 200 = 800); one at a time at ~20-50 ms a PUT would take 16-40 s.
   */
  QUARANTINE_PUT_CONCURRENCY: s.withDefault(s.integer({ coerce: true, min: 1, max: 128 }), 32),
  DEADLINE_MARGIN_MS: tuningField(tuning.deadline_margin_ms),
  ...sdkRetryFields(tuning),
});

export type DlqRedriveConfig = s.Output<typeof dlqRedriveConfigSchema.shape>;

/** What a manual invocation (console, `aws lambda invoke`) may ask for. */
export const manualActionSchema = s.oneOf("action", {
  replay: s.object({
    action: s.literal("replay"),
    filter: s.withDefault(
      s.object({
        reason: s.optional(s.text()),
        since: s.optional(s.datetime()),
        until: s.optional(s.datetime()),
        session: s.optional(s.text()),
        shardId: s.optional(s.text()),
      }),
      {},
    ),
    dryRun: s.withDefault(s.boolean(), true),
    ratePerSecond: s.withDefault(s.integer({ min: 1, max: 1_000 }), 100),
    /** Records whose reason is permanent (bad-json...) are put back only when asked (docs/operations.md). */
    includePermanent: s.withDefault(s.boolean(), false),
    /** At most this many records; the rest wait for the next invocation. */
    max: s.optional(s.integer({ min: 1, max: 1_000_000 })),
    /** Read every quarantine object again, the replay journals aside (docs/operations.md "The replay journal"). */
    fullScan: s.optional(s.boolean()),
  }),
  "redrive-dlq": s.object({
    action: s.literal("redrive-dlq"),
    dlqUrl: queueUrl,
    sourceUrl: queueUrl,
    dryRun: s.withDefault(s.boolean(), true),
    ratePerSecond: s.optional(s.integer({ min: 1, max: 500 })),
  }),
});

export type ManualAction = NonNullable<(typeof manualActionSchema)["output"]>;
