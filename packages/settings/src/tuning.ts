/**
 * The tuning settings of the functions, declared once: the field in terraform.tfvars.json, the
 * environment variable the function reads, its range and its default. The settings schema
 * (schema.ts) and the Terraform variables generated from it take the ranges and defaults from here,
 * the pipeline module maps each field to its variable, and the functions' config.ts read the variable
 * with these limits. No imports and no side effects: the functions' bundles include this file (and
 * must not include zod, docs/benchmarks/cold-start.md).
 */

export interface Tuning {
  /** The function's environment variable. */
  readonly variable: string;
  readonly min: number;
  readonly max: number;
  /** The function's value when neither the settings nor its environment set one. */
  readonly default: number;
  readonly description: string;
}

/** Stop starting records or jobs when less than this much of the invocation remains. */
const deadlineMargin = (defaultMs: number): Tuning => ({
  variable: "DEADLINE_MARGIN_MS",
  min: 0,
  max: 900_000,
  default: defaultMs,
  description:
    "Stop starting work when less than this much (ms) of the invocation remains; what is in flight must finish within it.",
});

/** The processor: partition keys processed at once within a batch. */
const processor = {
  deadline_margin_ms: deadlineMargin(5_000),
  concurrency: {
    variable: "PROCESSOR_CONCURRENCY",
    min: 1,
    max: 256,
    default: 16,
    description: "Partition keys processed at once within a batch.",
  },
} as const satisfies Record<string, Tuning>;

/**
 * The workers (packages/worker): messages (standard) or message groups (FIFO) in flight at once, and the
 * backoff of a job reported for retry (the visibility timeout its message is given, docs/aws-semantics.md
 * §2.6). The schema holds retry_backoff_max_ms within the queue's visibility timeout. Their minimum is
 * 1 ms, not a second: the local pipeline divides every *_MS setting by its time scale (npm start: 10).
 */
const worker = {
  deadline_margin_ms: deadlineMargin(5_000),
  concurrency: {
    variable: "WORKER_CONCURRENCY",
    min: 1,
    max: 256,
    default: 10,
    description: "Messages (standard queue) or message groups (FIFO queue) in flight at once within a batch.",
  },
  retry_backoff_base_ms: {
    variable: "RETRY_BACKOFF_BASE_MS",
    min: 1,
    max: 43_200_000,
    default: 5_000,
    description:
      "A job reported for retry comes back after a random 0 to this x 2^(receives - 1) ms (full jitter) instead of the queue's visibility timeout.",
  },
  retry_backoff_max_ms: {
    variable: "RETRY_BACKOFF_MAX_MS",
    min: 1,
    max: 43_200_000,
    default: 30_000,
    description:
      "The ceiling of that backoff, in ms: at least retry_backoff_base_ms, at most the queue's visibility timeout (30 s by default: SQS's own default visibility timeout, so the default fits any queue at least that long).",
  },
} as const satisfies Record<string, Tuning>;

/** dlq-redrive: on-failure records handled at once; a larger margin, since a record re-reads a range. */
const dlqRedrive = {
  deadline_margin_ms: deadlineMargin(10_000),
  concurrency: {
    variable: "FAILURE_RECORD_CONCURRENCY",
    min: 1,
    max: 64,
    default: 4,
    description: "On-failure records handled at once within a batch.",
  },
} as const satisfies Record<string, Tuning>;

/** The tuning of each function, by its settings key in terraform.tfvars.json. */
export const TUNING = {
  processor,
  tool_worker: worker,
  fifo_worker: worker,
  dlq_redrive: dlqRedrive,
} as const;

/** The tuning fields every function has (the workers have more: `TUNING[fn]` lists a function's own). */
export type TuningField = keyof typeof processor;
export const TUNING_FIELDS = Object.keys(processor) as TuningField[];
export type TunedFunction = keyof typeof TUNING;
/** The tuning fields of one function. */
export type FunctionTuningField<F extends TunedFunction> = keyof (typeof TUNING)[F] & string;

/** The workers' tuning (tool-worker and fifo-worker share packages/worker's configuration). */
export const WORKER_TUNING = worker;
export const PROCESSOR_TUNING = processor;
export const DLQ_REDRIVE_TUNING = dlqRedrive;

/** The environment variables a function gets from its tuning fields: `{ WORKER_CONCURRENCY: "10", ... }`. */
export function tuningVariables<F extends TunedFunction>(
  fn: F,
  values: Readonly<Record<FunctionTuningField<F>, number>>,
): Record<string, string> {
  const fields: Readonly<Record<string, Tuning>> = TUNING[fn];
  return Object.fromEntries(
    Object.entries(fields).map(([field, t]) => [
      t.variable,
      String((values as Readonly<Record<string, number>>)[field]),
    ]),
  );
}
