/**
 * Which environment's resources a command acts on. Each comes from its flag, else from the variable that
 * `npm start -- --serve` prints (and docs/operations.md exports from Terraform's outputs), else from the
 * environment's name prefix and the names Terraform gives (@mcp-pipeline/settings' resourceNames).
 */
import { GetQueueUrlCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { InvalidArnError, streamNameOfArn } from "@mcp-pipeline/aws/arn";
import { UsageError } from "@mcp-pipeline/cli";
import {
  QUEUE_KEYS,
  type QueueKey,
  queueSuffix,
  queueUrlVariables,
  resourceNames,
} from "@mcp-pipeline/settings";

/** `--queue tool-jobs` <-> the settings key `tool_jobs`. */
export const QUEUE_NAMES: Readonly<Record<string, QueueKey>> = Object.fromEntries(
  QUEUE_KEYS.map((key) => [queueSuffix(key), key]),
);

/** What the flags and variables say about the environment; undefined where they say nothing. */
export interface Targets {
  /** The name prefix (`mcp-prod`): --prefix, NAME_PREFIX, or STREAM_NAME without its `-events`. */
  readonly prefix?: string;
  readonly bucket?: string;
  readonly stream?: string;
  /** The stream's ARN when --stream gave one (the console shows ARNs): the stream found must be it. */
  readonly streamArn?: string;
  readonly table?: string;
}

/** `-events`: what every stream name ends with after its prefix. */
const STREAM_SUFFIX = resourceNames("x").stream.slice(1);

/** The variables that name one resource of an environment, each read as the resource's name. */
function namingVariables(env: NodeJS.ProcessEnv): { readonly variable: string; readonly name: string }[] {
  const named: { variable: string; name: string }[] = [];
  for (const variable of ["STREAM_NAME", "QUARANTINE_BUCKET", "TOOL_CALLS_TABLE"]) {
    const value = env[variable];
    if (value) named.push({ variable, name: value });
  }
  for (const key of QUEUE_KEYS)
    for (const variable of Object.values(queueUrlVariables(key))) {
      const url = env[variable];
      // A queue URL ends with the queue's name.
      if (url) named.push({ variable, name: url.replace(/\/+$/, "").split("/").at(-1) ?? url });
    }
  return named;
}

/**
 * Refuses variables that name another environment's resources than the prefix (a shell that loaded dev's
 * file and then is told `--prefix mcp-prod`, or a stale STREAM_NAME beside fresh queue URLs): each would
 * otherwise win over the prefix, and the command would act on, or report, the wrong environment. Names
 * given by flags are the operator's explicit choice and are not held to it.
 */
function refuseOtherEnvironments(prefix: string, source: string, env: NodeJS.ProcessEnv): void {
  const foreign = namingVariables(env).filter(({ name }) => !name.startsWith(`${prefix}-`));
  if (env.NAME_PREFIX && env.NAME_PREFIX !== prefix)
    foreign.unshift({ variable: "NAME_PREFIX", name: env.NAME_PREFIX });
  if (foreign.length === 0) return;
  throw new UsageError(
    `${source} names the environment ${prefix}, but ${foreign.map((f) => `${f.variable} names ${f.name}`).join(", ")}: another environment's (a stale shell?). Unset ${foreign.length === 1 ? "it" : "them"} or load the environment's own file, or name the resource by its flag (--stream, --bucket, --table, --from)`,
  );
}

export function targetsOf(
  values: {
    readonly prefix?: string;
    readonly bucket?: string;
    readonly stream?: string;
    readonly table?: string;
  },
  env: NodeJS.ProcessEnv,
): Targets {
  for (const flag of ["prefix", "bucket", "stream", "table"] as const) {
    const value = values[flag];
    if (value !== undefined && (value === "" || /\s/.test(value)))
      throw new UsageError(
        `--${flag} "${value}" ${value === "" ? "is empty" : "has white space in it"}: a name has none`,
      );
  }
  let streamArn: string | undefined;
  let named = values.stream;
  if (named?.startsWith("arn:")) {
    try {
      streamArn = named;
      named = streamNameOfArn(named);
    } catch (error) {
      if (error instanceof InvalidArnError)
        throw new UsageError(`--stream must be a stream's name or ARN: ${error.message}`, { cause: error });
      throw error;
    }
  }
  const stream = named ?? env.STREAM_NAME;
  const fromStream = stream?.endsWith(STREAM_SUFFIX) ? stream.slice(0, -STREAM_SUFFIX.length) : undefined;
  const prefix = values.prefix ?? env.NAME_PREFIX ?? fromStream;
  if (prefix)
    refuseOtherEnvironments(
      prefix,
      values.prefix !== undefined
        ? `--prefix ${prefix}`
        : env.NAME_PREFIX
          ? `NAME_PREFIX=${prefix}`
          : values.stream !== undefined
            ? `--stream ${values.stream}`
            : `STREAM_NAME=${stream}`,
      env,
    );
  const names = prefix ? resourceNames(prefix) : undefined;
  // From the prefix only with the account (quarantineBucket below): in AWS a bucket's name ends with it.
  const bucket = values.bucket ?? env.QUARANTINE_BUCKET;
  const table = values.table ?? env.TOOL_CALLS_TABLE ?? names?.toolCallsTable;
  return {
    ...(prefix ? { prefix } : {}),
    ...(bucket ? { bucket } : {}),
    ...((stream ?? names?.stream) ? { stream: (stream ?? names?.stream) as string } : {}),
    ...(streamArn ? { streamArn } : {}),
    ...(table ? { table } : {}),
  };
}

export function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new UsageError(what);
  return value;
}

const NO_BUCKET =
  "no quarantine bucket: pass --bucket, set QUARANTINE_BUCKET, or give the prefix (--prefix, STREAM_NAME)";

/** Refuses, before any request, a command that has no way to name the quarantine bucket. */
export function requireBucketSource(targets: Targets): void {
  if (targets.bucket === undefined && targets.prefix === undefined) throw new UsageError(NO_BUCKET);
}

/**
 * The quarantine bucket: named, or from the prefix and the caller's account (terraform/modules/pipeline
 * names it `<prefix>-quarantine-<account>`); undefined when only the prefix is known and not the account.
 */
export function quarantineBucket(targets: Targets, account: string | undefined): string | undefined {
  if (targets.bucket !== undefined) return targets.bucket;
  if (targets.prefix === undefined || account === undefined) return undefined;
  return resourceNames(targets.prefix, { accountId: account }).quarantineBucket;
}

/** quarantineBucket, or a UsageError saying why there is none. */
export function bucketOf(targets: Targets, account: string | undefined): string {
  requireBucketSource(targets);
  return required(
    quarantineBucket(targets, account),
    `the quarantine bucket's name needs the account (${targets.prefix}-quarantine-<account>), and the caller's is unknown: pass --bucket`,
  );
}

/** A pipeline queue's URLs: the --serve variables, else its name (from the prefix) looked up in SQS. */
export interface PipelineQueue {
  readonly key: QueueKey;
  /** As a person types it: `tool-jobs`. */
  readonly name: string;
  readonly fifo: boolean;
  readonly sourceUrl?: string;
  readonly dlqUrl?: string;
  /** Why a URL is missing: no variable and no prefix, or SQS has no such queue. */
  readonly missing?: string;
}

async function urlOf(sqs: SQSClient, name: string): Promise<string | undefined> {
  try {
    return (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
  } catch (error) {
    if (/QueueDoesNotExist|NonExistentQueue/.test((error as Error).name)) return undefined;
    throw error;
  }
}

export async function pipelineQueue(
  sqs: SQSClient,
  key: QueueKey,
  env: NodeJS.ProcessEnv,
  targets: Targets,
): Promise<PipelineQueue> {
  const variables = queueUrlVariables(key);
  const names = targets.prefix ? resourceNames(targets.prefix).queues[key] : undefined;
  const fifo = resourceNames("x").queues[key].fifo;
  const sourceUrl = env[variables.queue] || (names ? await urlOf(sqs, names.name) : undefined);
  const dlqUrl = env[variables.dlq] || (names ? await urlOf(sqs, names.dlqName) : undefined);
  const missing =
    sourceUrl && dlqUrl
      ? undefined
      : names
        ? `SQS has no queue ${sourceUrl ? names.dlqName : names.name}`
        : `set ${[sourceUrl ? undefined : variables.queue, dlqUrl ? undefined : variables.dlq].filter(Boolean).join(" and ")} (or STREAM_NAME / --prefix, to find ${sourceUrl || dlqUrl ? "it" : "them"} by name)`;
  return {
    key,
    name: queueSuffix(key),
    fifo,
    ...(sourceUrl ? { sourceUrl } : {}),
    ...(dlqUrl ? { dlqUrl } : {}),
    ...(missing ? { missing } : {}),
  };
}

export const pipelineQueues = (sqs: SQSClient, env: NodeJS.ProcessEnv, targets: Targets) =>
  Promise.all(QUEUE_KEYS.map((key) => pipelineQueue(sqs, key, env, targets)));
