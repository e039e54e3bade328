/**
 * The names of an environment's resources, from the suffixes terraform/modules/pipeline/resource-names.json
 * declares (Terraform reads the same file): the local pipeline, the redrive CLI and the live configuration
 * check name the resources Terraform creates without repeating how. tools/terraform/test/unit/resource-names.test.ts
 * holds this to the names main.tf and the queue module derive.
 */
import suffixes from "../../../terraform/modules/pipeline/resource-names.json" with { type: "json" };

/** The pipeline's functions, by their settings key in terraform.tfvars.json. */
export type FunctionKey = keyof typeof suffixes.functions;
/** The pipeline's queues (each with its DLQ), by their key in Terraform (`module.queue["session_jobs"]`). */
export type QueueKey = keyof typeof suffixes.queues;

export const FUNCTION_KEYS = Object.keys(suffixes.functions) as FunctionKey[];
export const QUEUE_KEYS = Object.keys(suffixes.queues) as QueueKey[];

/** A function that consumes one of the queues, by its settings key: every function but the processor. */
export type SqsConsumerKey = Exclude<FunctionKey, "processor">;

/** A queue's `consumer`, checked: the JSON types it as any string. */
function consumerOf(queue: QueueKey): SqsConsumerKey {
  const consumer = suffixes.queues[queue].consumer;
  if (consumer === "processor" || !FUNCTION_KEYS.includes(consumer as FunctionKey))
    throw new Error(`resource-names.json: queue ${queue}'s consumer "${consumer}" is not an SQS consumer`);
  return consumer as SqsConsumerKey;
}

export interface QueueNames {
  readonly name: string;
  /** The function that consumes the queue, by its settings key (terraform.tfvars.json). */
  readonly consumer: SqsConsumerKey;
  /** terraform/modules/queue: `<queue>-dlq`, FIFO when its source is. */
  readonly dlqName: string;
  readonly fifo: boolean;
}

export interface ResourceNames {
  readonly stream: string;
  /** The enhanced fan-out consumer, when the processor's ESM reads through one. */
  readonly streamConsumer: string;
  readonly toolCallsTable: string;
  readonly dedupeTable: string;
  readonly quarantineBucket: string;
  readonly resultsBucket: string;
  readonly functions: Readonly<Record<FunctionKey, string>>;
  readonly queues: Readonly<Record<QueueKey, QueueNames>>;
}

/**
 * Every name of the environment whose prefix is `prefix`. In AWS a bucket's name ends with the account
 * id (bucket names are global); pass `accountId` for those, leave it out for a local stack.
 */
export function resourceNames(prefix: string, options: { readonly accountId?: string } = {}): ResourceNames {
  const name = (suffix: string) => `${prefix}-${suffix}`;
  const bucket = (suffix: string) =>
    options.accountId === undefined ? name(suffix) : `${name(suffix)}-${options.accountId}`;
  const queue = (key: QueueKey): QueueNames => {
    const { suffix, fifo } = suffixes.queues[key];
    // SQS requires a FIFO queue's name to end in .fifo.
    const end = fifo ? ".fifo" : "";
    return {
      name: `${name(suffix)}${end}`,
      dlqName: `${name(suffix)}-dlq${end}`,
      fifo,
      consumer: consumerOf(key),
    };
  };
  return {
    stream: name(suffixes.stream),
    streamConsumer: name(suffixes.stream_consumer),
    toolCallsTable: name(suffixes.tool_calls_table),
    dedupeTable: name(suffixes.dedupe_table),
    quarantineBucket: bucket(suffixes.quarantine_bucket),
    resultsBucket: bucket(suffixes.results_bucket),
    functions: Object.fromEntries(FUNCTION_KEYS.map((key) => [key, name(suffixes.functions[key])])) as Record<
      FunctionKey,
      string
    >,
    queues: Object.fromEntries(QUEUE_KEYS.map((key) => [key, queue(key)])) as Record<QueueKey, QueueNames>,
  };
}

/**
 * The variables that hold a queue's URLs where a shell needs them (`npm start -- --serve` prints them,
 * the redrive CLI's `--queue` reads them): `session_jobs` -> SESSION_JOBS_QUEUE_URL, SESSION_JOBS_DLQ_URL.
 */
export function queueUrlVariables(queue: QueueKey): { readonly queue: string; readonly dlq: string } {
  const upper = queue.toUpperCase();
  return { queue: `${upper}_QUEUE_URL`, dlq: `${upper}_DLQ_URL` };
}

/** `session_jobs` <-> `session-jobs`: the suffix a person types (`--queue session-jobs`). */
export const queueSuffix = (queue: QueueKey): string => suffixes.queues[queue].suffix;
