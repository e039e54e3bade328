import * as z from "zod";
import { declaredVariables } from "./function-wiring.js";
import { FUNCTION_KEYS } from "./resource-names.js";
import { MAX_RECEIVE_COUNT, TUNING, type TunedFunction, type Tuning } from "./tuning.js";

/**
 * The settings of one environment, as `terraform/environments/<env>/terraform.tfvars.json` holds them.
 * Terraform reads the file natively; the local runtime, the tests and the config linter read it through
 * this schema. Ranges are AWS's (docs/aws-semantics.md §1-3, §7). The Terraform variables that take these
 * settings, with a `validation` block per range, are generated from this schema
 * (`npm run generate:terraform-variables`, tools/terraform/src/docs/settings-variables.ts).
 */

/**
 * A Terraform `validation` that the JSON Schema of a field cannot say (a refinement, or a rule across
 * fields): `{value}` stands for the field's reference (`var.processor.esm`). Carried as metadata, so the
 * rule is written here, beside the field, and only here.
 */
export interface TerraformValidation {
  readonly condition: string;
  readonly message: string;
}
const terraform = (...validations: TerraformValidation[]) => ({ terraformValidations: validations });

/** An environment's name: its directory under terraform/environments and the tfvars' `environment`. */
export const ENVIRONMENT_NAME = /^[a-z][a-z0-9-]{1,15}$/;

const int = (min: number, max: number) => z.number().int().min(min).max(max);

/** -1 (infinite) or 60..604,800: values 0..59 are in the API's range but refused (§1.3). */
const recordAge = z
  .number()
  .int()
  .refine((v) => v === -1 || (v >= 60 && v <= 604_800), "must be -1 or 60..604800 (§1.3)")
  .meta(
    terraform({
      condition: "{value} == -1 || ({value} >= 60 && {value} <= 604800)",
      message: "must be -1 or 60-604800 (§1.3).",
    }),
  );

/**
 * Every variable the pipeline sets in a function (terraform/modules/pipeline/function-environment.json) and
 * what sets it: the free-form `environment` may not set one too, since the declared value would replace it.
 */
const DECLARED_VARIABLES = new Map(FUNCTION_KEYS.flatMap((fn) => [...declaredVariables(fn)]));

export const functionSettingsSchema = z.object({
  /** Lambda timeout, 1..900 s. */
  timeout_seconds: int(1, 900),
  memory_mb: int(128, 10_240),
  /** null: unreserved. */
  reserved_concurrency: int(0, 10_000).nullable(),
  log_retention_days: z.union([
    z.literal(1),
    z.literal(3),
    z.literal(5),
    z.literal(7),
    z.literal(14),
    z.literal(30),
    z.literal(60),
    z.literal(90),
    z.literal(120),
    z.literal(150),
    z.literal(180),
    z.literal(365),
    z.literal(400),
    z.literal(545),
    z.literal(731),
    z.literal(1096),
    z.literal(1827),
    z.literal(2192),
    z.literal(2557),
    z.literal(2922),
    z.literal(3288),
    z.literal(3653),
  ]),
  /**
   * What one record (or job) is expected to take, in ms: the configuration check compares
   * batch_size x this with the timeout, so a full batch cannot time out by design.
   */
  expected_record_latency_ms: int(1, 900_000),
  /**
   * Extra environment variables, for what has no typed setting (a tool's own configuration). A variable
   * the pipeline sets is refused here: a tuning variable has its typed field (`concurrency`,
   * `deadline_margin_ms`), which Terraform validates and maps to the variable, and a wired one its resource.
   */
  environment: z
    .record(z.string().regex(/^[A-Z][A-Z0-9_]*$/), z.string())
    .default({})
    .superRefine((environment, ctx) => {
      for (const name of Object.keys(environment)) {
        const declared = DECLARED_VARIABLES.get(name);
        if (declared)
          ctx.addIssue({
            code: "custom",
            path: [name],
            message:
              declared.from === "setting"
                ? `${name} is a typed setting: set ${declared.field} instead`
                : `${name} is set by the pipeline from ${declared.source}`,
          });
      }
    })
    .meta(
      terraform({
        condition: `length(setintersection(keys({value}), [${[...DECLARED_VARIABLES.keys()].map((v) => `"${v}"`).join(", ")}])) == 0`,
        message: `a variable the pipeline sets (${[...DECLARED_VARIABLES.keys()].join(", ")}) may not be set here: modules/pipeline/function-environment.json declares it (a tuning variable has its typed setting).`,
      }),
    ),
});

const tuned = (t: Tuning) => int(t.min, t.max).default(t.default).describe(t.description);
/** A function's tuning fields, with the ranges and defaults of function-environment.json (tuning.ts). */
const tuning = <F extends TunedFunction>(fn: F) =>
  Object.fromEntries(Object.entries(TUNING[fn]).map(([field, t]) => [field, tuned(t)])) as {
    [K in keyof (typeof TUNING)[F]]: ReturnType<typeof tuned>;
  };

export const kinesisEsmSchema = z
  .object({
    batch_size: int(1, 10_000),
    maximum_batching_window_in_seconds: int(0, 300),
    parallelization_factor: int(1, 10),
    starting_position: z.enum(["TRIM_HORIZON", "LATEST"]),
    /** -1 = infinite (a poison record then blocks its shard until retention ends: §1.3). */
    maximum_retry_attempts: int(-1, 10_000),
    maximum_record_age_in_seconds: recordAge,
    bisect_batch_on_function_error: z.boolean(),
    report_batch_item_failures: z.boolean(),
    /** Read through an enhanced fan-out consumer instead of shared throughput. */
    enhanced_fan_out: z.boolean(),
    /** Send the on-failure record (§1.6) to the failure queue, which dlq-redrive consumes. */
    on_failure_destination: z.boolean(),
  })
  .strict();

/**
 * ScalingConfig.MaximumConcurrency (§2.2): the field must be present, and its messages say what it takes,
 * null included, where zod's own would say only "expected number, received undefined".
 */
const MAXIMUM_CONCURRENCY_TAKES =
  "a whole number from 2 to 1000 (ScalingConfig.MaximumConcurrency, §2.2), or null for no limit of the mapping's own";
const maximumConcurrency = z
  .number({
    error: (issue) =>
      issue.input === undefined
        ? `missing: set ${MAXIMUM_CONCURRENCY_TAKES}`
        : `must be ${MAXIMUM_CONCURRENCY_TAKES}`,
  })
  .int({ error: `must be ${MAXIMUM_CONCURRENCY_TAKES}` })
  .min(2, { error: `must be ${MAXIMUM_CONCURRENCY_TAKES}` })
  .max(1_000, { error: `must be ${MAXIMUM_CONCURRENCY_TAKES}` })
  .nullable();

export const sqsEsmSchema = z
  .object({
    batch_size: int(1, 10_000),
    maximum_batching_window_in_seconds: int(0, 300),
    /** ScalingConfig.MaximumConcurrency, 2..1000 (§2.2); null = not set. */
    maximum_concurrency: maximumConcurrency,
    report_batch_item_failures: z.boolean(),
  })
  .strict()
  .refine((e) => e.batch_size <= 10 || e.maximum_batching_window_in_seconds >= 1, {
    message: "a batch size over 10 needs maximum_batching_window_in_seconds >= 1 (§2.1)",
    path: ["maximum_batching_window_in_seconds"],
  })
  .meta(
    terraform({
      condition: "{value}.batch_size <= 10 || {value}.maximum_batching_window_in_seconds >= 1",
      message: "a batch size over 10 needs maximum_batching_window_in_seconds >= 1 (§2.1).",
    }),
  );

export const queueSettingsSchema = z
  .object({
    visibility_timeout_seconds: int(0, 43_200).describe(
      "At least 6 x the consumer's timeout + batching window (docs/aws-semantics.md §2.1).",
    ),
    message_retention_seconds: int(60, 1_209_600).describe("How long the source queue keeps a message."),
    max_receive_count: int(MAX_RECEIVE_COUNT.min, MAX_RECEIVE_COUNT.max).describe(
      "Receives before SQS moves a message to the DLQ (>= 5 recommended, docs/aws-semantics.md §2.3).",
    ),
    dlq_message_retention_seconds: int(60, 1_209_600).describe(
      "How long the DLQ keeps a message: longer than the source, so nothing expires in the DLQ first.",
    ),
  })
  .strict();

export const streamSettingsSchema = z
  .object({
    mode: z.enum(["ON_DEMAND", "PROVISIONED"]),
    /** Used in PROVISIONED mode. */
    shard_count: int(1, 500),
    retention_period_hours: int(24, 8_760),
  })
  .strict();

/**
 * The quarantine bucket: the only copy of the records the pipeline could not apply (docs/security.md,
 * "Runtime"). Nothing in it expires unless `replayed_expiration_days` is set, and then only what a replay
 * has put back in the stream (tagged replayed = true). Deletion, lifecycle, versioning and Object Lock
 * changes are denied to every principal but the break-glass role, and to everyone without one.
 */
export const quarantineSettingsSchema = z
  .object({
    /** Days after it is written that a replayed record's object expires; null: never (the default). */
    replayed_expiration_days: int(1, 36_500).nullable().default(null),
    /**
     * The IAM role (its name, in the environment's account) that alone may delete from the quarantine or
     * change its protection; null: nobody (the account's root user can still remove the bucket policy).
     */
    break_glass_role_name: z
      .string()
      .regex(/^[\w+=,.@-]{1,64}$/)
      .nullable()
      .default(null),
    /** S3 Object Lock on every new object version: off (the default), GOVERNANCE or COMPLIANCE. */
    object_lock_mode: z.enum(["off", "GOVERNANCE", "COMPLIANCE"]).default("off"),
    /** How long Object Lock retains each version, in days, when it is on. */
    object_lock_days: int(1, 36_500).default(365),
  })
  .strict();

export const alarmSettingsSchema = z
  .object({
    /** Processor iterator age that pages someone, in ms. */
    iterator_age_ms: int(1_000, 604_800_000),
    /** Age of the oldest message in a DLQ before the alarm fires, in s. */
    dlq_oldest_message_age_seconds: int(60, 1_209_600),
    /** Fraction of the timeout that a p99 Duration may reach before the alarm fires. */
    duration_timeout_ratio: z.number().gt(0).lte(1),
  })
  .strict();

/**
 * A function stops starting work when its remaining time falls to the deadline margin (docs/tool-workers.md
 * "Time"): a margin at or above the timeout stops it before it starts anything, and every record or message
 * is retried until it is discarded. lint:config names the rule (deadline-margin-not-below-timeout); a
 * direct `terraform plan` refuses it too.
 */
const DEADLINE_MARGIN_RULE: TerraformValidation = {
  condition: "{value}.deadline_margin_ms < {value}.timeout_seconds * 1000",
  message:
    "deadline_margin_ms must be below the function's timeout (in ms): the function stops starting work when its remaining time reaches the margin.",
};

/**
 * A worker's retry backoff sets a message's visibility timeout (docs/aws-semantics.md §2.6): a ceiling
 * past the queue's own timeout would bring a job back later than no backoff at all.
 */
const RETRY_BACKOFF_RULES: TerraformValidation[] = [
  {
    condition: "{value}.retry_backoff_max_ms <= {value}.queue.visibility_timeout_seconds * 1000",
    message:
      "retry_backoff_max_ms must be at most the queue's visibility timeout (in ms): the backoff shortens it, never lengthens it (§2.6).",
  },
  {
    condition: "{value}.retry_backoff_base_ms <= {value}.retry_backoff_max_ms",
    message: "retry_backoff_base_ms must be at most retry_backoff_max_ms.",
  },
];

/** The loader's side of RETRY_BACKOFF_RULES (Terraform checks the same at plan time). */
interface RetryBackoffSettings {
  readonly timeout_seconds: number;
  readonly retry_backoff_base_ms: number;
  readonly retry_backoff_max_ms: number;
  readonly queue: { readonly visibility_timeout_seconds: number };
}
const withinVisibility = (worker: RetryBackoffSettings, ctx: z.RefinementCtx) => {
  const visibility = worker.queue.visibility_timeout_seconds;
  // A visibility timeout below the function's timeout breaks a rule of its own first (Lambda refuses the
  // mapping, §2.1), which lint:config names (visibility-timeout-too-short): reported here, the backoff
  // ceiling (often its default, a field the file does not hold) would hide it.
  if (visibility < worker.timeout_seconds) return;
  if (worker.retry_backoff_max_ms > visibility * 1000)
    ctx.addIssue({
      code: "custom",
      path: ["retry_backoff_max_ms"],
      message: `${worker.retry_backoff_max_ms} ms must be at most queue.visibility_timeout_seconds (${visibility} s = ${visibility * 1000} ms): the backoff shortens the visibility timeout, never lengthens it (§2.6)`,
    });
  if (worker.retry_backoff_base_ms > worker.retry_backoff_max_ms)
    ctx.addIssue({
      code: "custom",
      path: ["retry_backoff_base_ms"],
      message: `must be at most retry_backoff_max_ms (${worker.retry_backoff_max_ms})`,
    });
};

/**
 * An SQS consumer's settings: the function, its mapping and its queue. The queue rules hold in Terraform
 * (Lambda refuses a mapping whose queue hides messages for less than the function's timeout, §2.1); the
 * loader leaves them to lint:config, which names the rule.
 */
const sqsConsumerSchema = <F extends TunedFunction>(fn: F, ...extra: TerraformValidation[]) => {
  const backoff = "retry_backoff_max_ms" in TUNING[fn];
  return functionSettingsSchema
    .extend({ ...tuning(fn), esm: sqsEsmSchema, queue: queueSettingsSchema })
    .strict()
    .superRefine((consumer, ctx) => {
      if (backoff) withinVisibility(consumer as unknown as RetryBackoffSettings, ctx);
    })
    .meta(
      terraform(
        {
          condition: "{value}.queue.visibility_timeout_seconds >= {value}.timeout_seconds",
          message:
            "the queue's visibility timeout must be at least the function's timeout; Lambda refuses the mapping otherwise (§2.1).",
        },
        {
          condition: "{value}.queue.dlq_message_retention_seconds > {value}.queue.message_retention_seconds",
          message: "the DLQ must keep messages longer than its source queue.",
        },
        DEADLINE_MARGIN_RULE,
        ...(backoff ? RETRY_BACKOFF_RULES : []),
        ...extra,
      ),
    );
};

export const environmentSettingsSchema = z
  .object({
    environment: z.string().regex(ENVIRONMENT_NAME).describe("Environment name (dev, prod...)."),
    region: z
      .string()
      .regex(/^[a-z]{2}(-[a-z]+)+-\d$/)
      .describe("AWS region."),
    name_prefix: z
      .string()
      .regex(/^[a-z][a-z0-9-]{1,30}$/)
      .describe("Prefix of every resource name."),
    stream: streamSettingsSchema.describe("The lifecycle stream."),
    processor: functionSettingsSchema
      .extend({ ...tuning("processor"), esm: kinesisEsmSchema })
      .strict()
      .meta(terraform(DEADLINE_MARGIN_RULE))
      .describe("The Kinesis processor and its ESM."),
    tool_worker: sqsConsumerSchema("tool_worker").describe(
      "The tool-worker, its ESM and its standard queue.",
    ),
    fifo_worker: sqsConsumerSchema("fifo_worker", {
      // Refused by Lambda; the loader leaves it to lint:config (fifo-batch-size), which names the rule.
      condition: "{value}.esm.batch_size <= 10",
      message: "a FIFO queue's mapping takes at most 10 messages a batch (§3).",
    }).describe("The fifo-worker, its ESM and its FIFO queue."),
    dlq_redrive: sqsConsumerSchema("dlq_redrive").describe(
      "dlq-redrive, its ESM and the Kinesis failure queue it consumes.",
    ),
    alarms: alarmSettingsSchema.describe("Alarm thresholds."),
    quarantine: quarantineSettingsSchema
      .prefault({})
      .describe(
        "The quarantine bucket: what may expire (replayed records only, never by default), the break-glass role, Object Lock.",
      ),
    test_tools: z
      .boolean()
      .default(false)
      .describe(
        "Offer the test tools (load.latency: a job chooses how long a worker waits and whether it fails) in the workers: dev only, never prod (lint:config's test-tools-in-prod).",
      ),
  })
  .strict();

export type EnvironmentSettings = z.infer<typeof environmentSettingsSchema>;
/** One function's settings, tuning included. */
export type FunctionSettings = z.infer<typeof functionSettingsSchema> & {
  readonly deadline_margin_ms: number;
  readonly concurrency: number;
};
export type KinesisEsmSettings = z.infer<typeof kinesisEsmSchema>;
export type SqsEsmSettings = z.infer<typeof sqsEsmSchema>;
export type QueueSettings = z.infer<typeof queueSettingsSchema>;
export type QuarantineSettings = z.infer<typeof quarantineSettingsSchema>;
