import * as s from "@mcp-pipeline/contracts/light-schema";
// The tuning variables' ranges and defaults are their settings' (terraform.tfvars.json), declared once.
import {
  functionTuning,
  MAX_RECEIVE_COUNT,
  sdkRetryFields,
  tuningField,
} from "@mcp-pipeline/settings/tuning";

// light-schema, not zod: zod's full build was a sixth of what a worker's cold start loaded
// (docs/benchmarks/cold-start.md). test/unit/config.test.ts shows what it reads and the problem each bad
// setting gives. The settings of the tools a worker runs are the function's:
// functions/<worker>/src/config.ts adds them to these.

/** DynamoDB's item limit is 400 KB; the rest of the call's item needs room beside an inline result. */
export const MAX_INLINE_RESULT_BYTES = 350_000;

/** The worker functions, by their settings key: both run this package, each with its own tuning. */
export type WorkerFunction = "tool_worker" | "fifo_worker";

/**
 * The worker's part of a worker function's environment, set by terraform/modules/function and by the local
 * runtime, with that function's tuning (its bundle holds only its own declaration: tools/bundler).
 */
export const workerConfigSchema = (fn: WorkerFunction) => {
  const tuning = functionTuning(fn);
  return s.object({
    TOOL_CALLS_TABLE: s.text({ min: 3, max: 255 }),
    DEDUPE_TABLE: s.text({ min: 3, max: 255 }),
    /** Where results too large for the table go, as `results/<callId>/<runId>.json`. */
    RESULTS_BUCKET: s.text({ min: 3, max: 63 }),
    /** The lifecycle stream the worker publishes started/completed/failed events to. */
    EVENTS_STREAM_NAME: s.streamName(),
    /** The source queue's DLQ: poison messages go there at once, with their reason. */
    DEAD_LETTER_QUEUE_URL: s.sqsQueueUrl(),
    /**
     * The source queue's redrive policy maxReceiveCount. When set, a job whose attempt at this receive
     * count fails (or is not started) is recorded in the tool-calls table as dead-lettered, with
     * DEAD_LETTER_QUEUE_URL: SQS moves it there instead of delivering it again (§2.3). Unset, such a call
     * shows `retrying` until it is redriven.
     */
    MAX_RECEIVE_COUNT: s.optional(
      s.integer({ coerce: true, min: MAX_RECEIVE_COUNT.min, max: MAX_RECEIVE_COUNT.max }),
    ),
    /** Messages (standard) or message groups (FIFO) in flight at once within a batch. */
    WORKER_CONCURRENCY: tuningField(tuning.concurrency),
    /** Stop starting jobs when less than this much of the invocation remains. */
    DEADLINE_MARGIN_MS: tuningField(tuning.deadline_margin_ms),
    /** A job reported for retry comes back after a draw from 0 to this x 2^(receives - 1) ms (src/redelivery.ts). */
    RETRY_BACKOFF_BASE_MS: tuningField(tuning.retry_backoff_base_ms),
    /** The most that draw's ceiling grows to; the settings hold it within the queue's visibility timeout. */
    RETRY_BACKOFF_MAX_MS: tuningField(tuning.retry_backoff_max_ms),
    ...sdkRetryFields(tuning),
    IDEMPOTENCY_RETENTION_SECONDS: s.withDefault(s.integer({ coerce: true, min: 60 }), 14 * 24 * 3600),
    /** Results up to this size (JSON bytes) are stored in the table; larger ones in S3. */
    RESULT_INLINE_MAX_BYTES: s.withDefault(
      s.integer({ coerce: true, min: 0, max: MAX_INLINE_RESULT_BYTES }),
      256 * 1024,
    ),
  });
};

export type WorkerConfig = s.Output<ReturnType<typeof workerConfigSchema>["shape"]>;
