/**
 * Records, with your own AWS account, what Lambda's Kinesis event source mapping does with a partial
 * answer when BisectBatchOnFunctionError and ReportBatchItemFailures are both on: does the split at the
 * returned sequence number use one of MaximumRetryAttempts? AWS does not say (docs/aws-semantics.md §1.4).
 * docs/recipes/bisect-partial-split.md says how to run it, what it creates and costs, and what has been run.
 *
 * It creates a throwaway IAM role, two SQS queues, a one-shard Kinesis stream, a Lambda function and the
 * mapping; puts a few records; waits for the on-failure record while printing every invocation; compares
 * what happened with the two readings (split-free, counts-attempt); and deletes everything it created, also
 * after an error or Ctrl-C. Without --yes it only says what it would do, and where.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  CreateRoleCommand,
  DeleteRoleCommand,
  DeleteRolePolicyCommand,
  IAMClient,
  PutRolePolicyCommand,
} from "@aws-sdk/client-iam";
import {
  CreateStreamCommand,
  DeleteStreamCommand,
  type KinesisClient,
  PutRecordCommand,
  waitUntilStreamExists,
} from "@aws-sdk/client-kinesis";
import {
  CreateEventSourceMappingCommand,
  CreateFunctionCommand,
  DeleteEventSourceMappingCommand,
  DeleteFunctionCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
  waitUntilFunctionActiveV2,
} from "@aws-sdk/client-lambda";
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { GetCallerIdentityCommand, STSClient } from "@aws-sdk/client-sts";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { deterministicZip } from "@mcp-pipeline/bundler";
import {
  ExitCode,
  parseCommandLine,
  refuseCommandLine,
  runIfMain,
  shown,
  UsageError,
  wholeNumber,
} from "@mcp-pipeline/cli";
// The on-failure record's shape (docs/aws-semantics.md §1.6), as the local ESM writes it.
import type { KinesisFailureRecord } from "@mcp-pipeline/local-runtime";
import { backoffDelayMs, retry, sleep } from "@mcp-pipeline/retry";

export const USAGE = `Usage: npx tsx docs/recipes/bisect-partial-split.ts --region REGION [options]

Creates, in your AWS account, a throwaway Kinesis stream, Lambda function and event source mapping
(BisectBatchOnFunctionError on, ReportBatchItemFailures, an SQS on-failure destination), puts a few
records, and prints every invocation and the on-failure record: whether a partial answer's split uses a
retry (docs/aws-semantics.md §1.4). Deletes everything it created, also on an error or Ctrl-C.

  --region REGION      where to create it (or AWS_REGION / AWS_DEFAULT_REGION)
  --yes                create, run and delete; without it, only say what would be done, and where
  --records N          records put into the stream, 3 to 100 (default 6)
  --max-retries N      the mapping's MaximumRetryAttempts, 0 to 10 (default 1)
  --wait SECONDS       how long to wait for the on-failure record, 1 to 3600 (default 900: a new
                       mapping can take minutes to start polling)
  --prefix NAME        start of every resource name, 1 to 32 of a-z 0-9 - (default bisect-probe);
                       a random suffix follows it
  --help               this text

Credentials are the AWS SDK's usual ones (environment, profile, SSO...). Exit status: 0 the on-failure
record arrived and everything was deleted, 1 it did not arrive in time or a step failed (everything
deleted), 2 bad command line, 3 something could not be deleted (named on stderr), 130 interrupted.`;

export const Accounting = { SplitFree: "split-free", CountsAttempt: "counts-attempt" } as const;
export type Accounting = (typeof Accounting)[keyof typeof Accounting];

/** What a run of the experiment gives: the invocations (record indexes) and the one on-failure record. */
export interface Outcome {
  readonly invocations: readonly (readonly number[])[];
  readonly onFailure: { readonly first: number; readonly last: number; readonly invokeCount: number };
}

/**
 * What the mapping does under one accounting, by the rules of docs/aws-semantics.md §1.4 and the local
 * ESM's choices (docs/local-runtime.md): the function reports its batch's second record (its only one in a
 * batch of one); a split that finishes records uses no retry ("split-free") or one ("counts-attempt"); a
 * failure at the batch's first record splits nothing off and uses one; past MaximumRetryAttempts the rest
 * goes to the on-failure destination.
 */
export function predict(records: number, maxRetries: number, accounting: Accounting): Outcome {
  const invocations: number[][] = [];
  let batch = Array.from({ length: records }, (_, i) => i);
  let attempts = 0;
  for (;;) {
    invocations.push(batch);
    const reported = batch.length > 1 ? 1 : 0;
    const split = reported > 0;
    if (!(split && accounting === Accounting.SplitFree)) attempts += 1;
    const rest = batch.slice(reported);
    if (attempts > maxRetries) {
      return {
        invocations,
        onFailure: { first: rest[0] as number, last: rest.at(-1) as number, invokeCount: attempts },
      };
    }
    batch = rest;
  }
}

/** Options as the command line gives them. */
export interface RecipeOptions {
  readonly region: string;
  readonly prefix: string;
  readonly records: number;
  readonly maxRetries: number;
  readonly waitSeconds: number;
  readonly yes: boolean;
}

const PREFIX = /^[a-z0-9-]{1,32}$/;

/** The command line, checked: a UsageError names what is wrong. */
export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): RecipeOptions | "help" {
  const { values } = parseCommandLine(argv, {
    options: {
      region: { type: "string" },
      yes: { type: "boolean" },
      records: { type: "string" },
      "max-retries": { type: "string" },
      wait: { type: "string" },
      prefix: { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) return "help";
  const region = values.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  if (!region) throw new UsageError("--region is needed (or AWS_REGION): the run creates resources there");
  if (!/^[a-z]{2}(-[a-z]+)+-\d$/.test(region))
    throw new UsageError(`--region "${shown(region)}" is no AWS region`);
  const prefix = values.prefix ?? "bisect-probe";
  if (!PREFIX.test(prefix))
    throw new UsageError(`--prefix must be 1 to 32 of a-z 0-9 -, got "${shown(prefix)}"`);
  const records = wholeNumber("records", values.records, { fallback: 6, min: 3, max: 100 });
  const maxRetries = wholeNumber("max-retries", values["max-retries"], { fallback: 1, min: 0, max: 10 });
  const free = predict(records, maxRetries, Accounting.SplitFree).onFailure;
  const counted = predict(records, maxRetries, Accounting.CountsAttempt).onFailure;
  if (free.first === counted.first && free.invokeCount === counted.invokeCount) {
    throw new UsageError(
      `--records ${records} with --max-retries ${maxRetries}: both readings end with the same on-failure record; use more records or fewer retries`,
    );
  }
  return {
    region,
    prefix,
    records,
    maxRetries,
    waitSeconds: wholeNumber("wait", values.wait, { fallback: 900, min: 1, max: 3_600 }),
    yes: values.yes ?? false,
  };
}

export interface RecipeClients {
  readonly sts: STSClient;
  readonly iam: IAMClient;
  readonly lambda: LambdaClient;
  readonly kinesis: KinesisClient;
  readonly sqs: SQSClient;
}

/** The clients for a region; endpoints from the SDK's usual sources (AWS_ENDPOINT_URL_* included). */
export function clientsFor(region: string): RecipeClients {
  // Long polls wait up to 20 s: the request bound must outlast them.
  const slow = { region, connectionTimeoutMs: 5_000, requestTimeoutMs: 30_000 };
  return {
    sts: new STSClient({ region }),
    iam: new IAMClient({ region }),
    lambda: new LambdaClient({ region }),
    kinesis: kinesisClient(slow),
    sqs: sqsClient(slow),
  };
}

/** The names of everything a run creates. */
export interface ResourceNames {
  readonly role: string;
  readonly policy: string;
  readonly stream: string;
  readonly onFailureQueue: string;
  readonly attemptsQueue: string;
  readonly function: string;
}

export function namesFor(prefix: string, suffix: string): ResourceNames {
  const base = `${prefix}-${suffix}`;
  return {
    role: `${base}-role`,
    policy: `${base}-policy`,
    stream: `${base}-stream`,
    onFailureQueue: `${base}-on-failure`,
    attemptsQueue: `${base}-attempts`,
    function: `${base}-fn`,
  };
}

/** Who and where: the account and partition of the credentials. */
export interface Identity {
  readonly account: string;
  readonly partition: string;
  readonly arn: string;
}

export async function identityOf(sts: STSClient): Promise<Identity> {
  const { Account, Arn } = await sts.send(new GetCallerIdentityCommand({}));
  if (!Account || !Arn) throw new Error("GetCallerIdentity answered without an account");
  return { account: Account, arn: Arn, partition: Arn.split(":")[1] ?? "aws" };
}

/** What the run will do, in lines: printed before anything is created, and alone without --yes. */
export function planLines(identity: Identity, options: RecipeOptions, names: ResourceNames): string[] {
  const fmt = (o: Outcome) =>
    `${o.invocations.length} invocations (${o.invocations.map(range).join(", ")}); on-failure record ${o.onFailure.first}..${o.onFailure.last}, approximateInvokeCount ${o.onFailure.invokeCount}`;
  return [
    `account ${identity.account} (${identity.arn}), region ${options.region}`,
    `creates: IAM role ${names.role} (inline policy ${names.policy}: read ${names.stream}, send to the two queues),`,
    `  SQS queues ${names.onFailureQueue} (on-failure destination) and ${names.attemptsQueue} (one message per invocation),`,
    `  Kinesis stream ${names.stream} (1 provisioned shard, billed by the shard-hour while it exists),`,
    `  Lambda function ${names.function} (nodejs22.x, 128 MB) and its event source mapping:`,
    `  BatchSize ${options.records}, TRIM_HORIZON, BisectBatchOnFunctionError true, FunctionResponseTypes [ReportBatchItemFailures], MaximumRetryAttempts ${options.maxRetries}`,
    `puts records 0..${options.records - 1}; the function reports the second record of each batch (the only one of a batch of one)`,
    `split-free predicts:     ${fmt(predict(options.records, options.maxRetries, Accounting.SplitFree))}`,
    `counts-attempt predicts: ${fmt(predict(options.records, options.maxRetries, Accounting.CountsAttempt))}`,
    "then deletes all of it (also on an error or Ctrl-C)",
  ];
}

const range = (indexes: readonly number[]) =>
  indexes.length === 1 ? String(indexes[0]) : `${indexes[0]}-${indexes.at(-1)}`;

/** One invocation as the function recorded it in the attempts queue. */
export interface Attempt {
  readonly requestId: string;
  readonly at: string;
  readonly sequenceNumbers: readonly string[];
  readonly reported: string;
}

/** What the queues held: the invocations in order, and the on-failure records. */
export interface Observation {
  readonly attempts: readonly Attempt[];
  readonly failures: readonly KinesisFailureRecord[];
}

/**
 * Reads the two queues until an on-failure record ends at `lastSequence` (then drains the attempts queue)
 * or the deadline passes; `say` gets each invocation and failure record as it arrives.
 */
export async function observe(
  sqs: SQSClient,
  queues: { readonly attempts: string; readonly onFailure: string },
  lastSequence: string,
  until: { readonly deadline: number; readonly signal: AbortSignal },
  say: (line: string) => void,
): Promise<Observation & { readonly complete: boolean }> {
  const attempts = new Map<string, Attempt>();
  const failures = new Map<string, KinesisFailureRecord>();
  const receive = async (url: string, waitSeconds: number) => {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: waitSeconds,
        // Kept in memory, never deleted: the queue goes with the run. Invisible meanwhile, so seen once.
        VisibilityTimeout: 3_600,
      }),
      { abortSignal: until.signal },
    );
    return Messages.map((m) => ({ id: m.MessageId ?? "", body: JSON.parse(m.Body ?? "null") as unknown }));
  };
  const takeAttempts = async (waitSeconds: number) => {
    const got = await receive(queues.attempts, waitSeconds);
    for (const { id, body } of got) {
      if (attempts.has(id)) continue;
      const attempt = body as Attempt;
      attempts.set(id, attempt);
      say(
        `invocation at ${attempt.at}: ${attempt.sequenceNumbers.length} records from ${attempt.sequenceNumbers[0]}, reported ${attempt.reported}`,
      );
    }
    return got.length;
  };
  const done = () =>
    [...failures.values()].some((f) => f.KinesisBatchInfo.endSequenceNumber === lastSequence);
  while (!done() && Date.now() < until.deadline) {
    until.signal.throwIfAborted();
    while ((await takeAttempts(0)) > 0) {}
    const waitSeconds = Math.max(0, Math.min(10, Math.ceil((until.deadline - Date.now()) / 1000)));
    for (const { id, body } of await receive(queues.onFailure, waitSeconds)) {
      if (failures.has(id)) continue;
      failures.set(id, body as KinesisFailureRecord);
      say(`on-failure record: ${JSON.stringify(body)}`);
    }
  }
  if (done()) {
    // The function sent its message before it answered, so every invocation is in the queue; SQS may
    // still answer a receive empty while messages wait, so two empty long polls in a row end it.
    for (let empty = 0; empty < 2; ) empty = (await takeAttempts(2)) > 0 ? 0 : empty + 1;
  }
  return {
    attempts: [...attempts.values()].sort((a, b) => a.at.localeCompare(b.at)),
    failures: [...failures.values()],
    complete: done(),
  };
}

/** The observation in record indexes, for comparison with `predict`; undefined where a number is unknown. */
export function outcomeOf(observation: Observation, sequences: readonly string[]): Outcome | undefined {
  const index = (sequence: string) => sequences.indexOf(sequence);
  const [failure, ...others] = observation.failures;
  if (!failure || others.length > 0) return undefined;
  return {
    invocations: observation.attempts.map((a) => a.sequenceNumbers.map(index)),
    onFailure: {
      first: index(failure.KinesisBatchInfo.startSequenceNumber),
      last: index(failure.KinesisBatchInfo.endSequenceNumber),
      invokeCount: failure.requestContext.approximateInvokeCount,
    },
  };
}

/**
 * Which reading the observed run matches, by its invocations and the records its on-failure record names.
 * Not by `approximateInvokeCount`: what AWS counts there for a split batch (attempts, or every invocation
 * the records were in) is not documented either, so a count other than the local ESM's is said, not a
 * reason to call the run neither.
 */
export function verdict(
  observed: Outcome | undefined,
  records: number,
  maxRetries: number,
): { readonly matches: Accounting | "neither"; readonly lines: readonly string[] } {
  if (!observed) {
    return {
      matches: "neither",
      lines: ["verdict: not one on-failure record as both readings predict: read the records above"],
    };
  }
  const same = (a: Outcome, b: Outcome) =>
    JSON.stringify(a.invocations) === JSON.stringify(b.invocations) &&
    a.onFailure.first === b.onFailure.first &&
    a.onFailure.last === b.onFailure.last;
  for (const accounting of [Accounting.SplitFree, Accounting.CountsAttempt]) {
    const predicted = predict(records, maxRetries, accounting);
    if (same(observed, predicted)) {
      const count = observed.onFailure.invokeCount;
      const localCount = predicted.onFailure.invokeCount;
      return {
        matches: accounting,
        lines: [
          `verdict: AWS did what "${accounting}" predicts: ${accounting === Accounting.SplitFree ? "the split at the returned sequence number used no retry" : "the split at the returned sequence number used a retry"}`,
          ...(count === localCount
            ? []
            : [
                `and wrote approximateInvokeCount ${count}, where the local ESM writes ${localCount} for this reading (its attempts): record that too`,
              ]),
          `(the local ESM's partialSplitAccounting: "${accounting}"; please report it against docs/aws-semantics.md §1.4)`,
        ],
      };
    }
  }
  return {
    matches: "neither",
    lines: [
      `verdict: neither reading: ${observed.invocations.length} invocations (${observed.invocations.map(range).join(", ")}), on-failure record ${observed.onFailure.first}..${observed.onFailure.last} with approximateInvokeCount ${observed.onFailure.invokeCount}`,
      "(a first batch smaller than every record, or an invocation the function could not record, also gives this: read the lines above)",
    ],
  };
}

/** The errors that say a resource is already gone (Lambda and Kinesis, IAM, SQS). */
const GONE = new Set(["ResourceNotFoundException", "NoSuchEntityException", "QueueDoesNotExist"]);

/** Whether a call's error is the service's answer to its one and only try (so nothing was applied). */
function refusedAtOnce(error: unknown): boolean {
  const metadata = (error as { $metadata?: { httpStatusCode?: number; attempts?: number } }).$metadata;
  return metadata?.httpStatusCode !== undefined && (metadata.attempts ?? 1) <= 1;
}

/** What the run created, deleted last first; each deletion is tried whatever happened before. */
class Created {
  readonly #undo: { readonly what: string; readonly remove: () => Promise<unknown> }[] = [];

  add(what: string, remove: () => Promise<unknown>): void {
    this.#undo.push({ what, remove });
  }

  /**
   * Runs a create call and registers the deletion of what it creates. A create that got no answer
   * (interrupted by Ctrl-C, a connection lost, a timeout) or whose first try got none (a retry then hears
   * "already exists" about the first) may have been applied, so its deletion is registered all the same:
   * the names are this run's own (a random suffix), and what was never created is "not found" then.
   * Only a create refused at its first and only try created nothing: what exists under that name (a taken
   * name) is not this run's to delete.
   */
  async create<T>(what: string, remove: () => Promise<unknown>, call: () => Promise<T>): Promise<T> {
    try {
      const answer = await call();
      this.add(what, remove);
      return answer;
    } catch (error) {
      if (!refusedAtOnce(error)) this.add(what, remove);
      throw error;
    }
  }

  /** Deletes everything; returns what could not be deleted, with the reason. */
  async deleteAll(say: (line: string) => void): Promise<string[]> {
    const left: string[] = [];
    for (const { what, remove } of this.#undo.splice(0).reverse()) {
      try {
        await remove();
        say(`deleted ${what}`);
      } catch (error) {
        if (GONE.has((error as Error).name)) say(`no ${what} to delete (not found)`);
        else left.push(`${what}: ${(error as Error).name}: ${(error as Error).message}`);
      }
    }
    return left;
  }
}

/**
 * Retries a call that Lambda refuses until IAM has propagated the new role and its policy (seconds, at most
 * a minute or two): "The role defined for the function cannot be assumed by Lambda", "Please ensure the
 * role can perform the GetRecords...".
 */
function untilRolePropagates<T>(call: () => Promise<T>, signal: AbortSignal): Promise<T> {
  return retry(call, {
    maxAttempts: 30,
    delayMs: (r) => backoffDelayMs(r, { baseMs: 1_000, capMs: 5_000 }),
    retryable: (error) =>
      !signal.aborted &&
      (error as Error).name === "InvalidParameterValueException" &&
      /role/i.test((error as Error).message),
    sleep: (ms) => sleep(ms, signal),
  });
}

/** Retries a deletion AWS refuses while the resource is still being created (CREATING, Creating). */
function whenNotInUse<T>(call: () => Promise<T>): Promise<T> {
  return retry(call, {
    maxAttempts: 30,
    delayMs: () => 2_000,
    retryable: (error) => (error as Error).name === "ResourceInUseException",
  });
}

/**
 * Deletes the run's mapping: by its UUID, or, when the answer that held it never came, every mapping of the
 * run's function on the run's stream (both are this run's own). None is "not found".
 */
async function deleteMappings(
  lambda: LambdaClient,
  uuid: string | undefined,
  of: { readonly FunctionName: string; readonly EventSourceArn: string },
): Promise<void> {
  const listed = uuid ? undefined : await lambda.send(new ListEventSourceMappingsCommand({ ...of }));
  const uuids = uuid ? [uuid] : (listed?.EventSourceMappings ?? []).flatMap((m) => (m.UUID ? [m.UUID] : []));
  if (uuids.length === 0) {
    throw Object.assign(new Error(`no mapping of ${of.FunctionName}`), { name: "ResourceNotFoundException" });
  }
  for (const id of uuids) {
    await whenNotInUse(() => lambda.send(new DeleteEventSourceMappingCommand({ UUID: id })));
  }
}

export interface RunResult {
  readonly observation: Observation & { readonly complete: boolean };
  readonly sequences: readonly string[];
  readonly verdict: ReturnType<typeof verdict>;
}

/** Where the run's queues are: the on-failure destination and the queue of invocations. */
type QueueUrls = Record<"onFailure" | "attempts", string>;

/**
 * Creates the resources, runs the experiment and deletes everything, whatever happens on the way: returns
 * the result, what could not be deleted (`left`, with the reason) and the error that ended the run early.
 */
export async function runRecipe(
  clients: RecipeClients,
  options: RecipeOptions & { readonly names: ResourceNames; readonly identity: Identity },
  io: { readonly say: (line: string) => void; readonly signal: AbortSignal; readonly handlerCode: Buffer },
): Promise<{ readonly result?: RunResult; readonly left: string[]; readonly error?: unknown }> {
  const created = new Created();
  let result: RunResult | undefined;
  let failure: unknown;
  try {
    result = await new RecipeRun(clients, options, io, created).run();
  } catch (error) {
    failure = error;
  }
  // Whatever ended the run, what it created goes: the run's resources are billed while they exist.
  const left = await created.deleteAll(io.say);
  return { ...(result ? { result } : {}), left, ...(failure === undefined ? {} : { error: failure }) };
}

/**
 * One run's steps, in the order they must come: each resource after those it names (the policy names the
 * queues and the stream, the function the role and the attempts queue, the mapping the stream, the function
 * and the on-failure queue), the records before the mapping, then the wait. Every create is registered in
 * `created`, which runRecipe empties whatever happens.
 */
class RecipeRun {
  readonly #clients: RecipeClients;
  readonly #options: RecipeOptions & { readonly names: ResourceNames; readonly identity: Identity };
  readonly #say: (line: string) => void;
  readonly #signal: AbortSignal;
  readonly #handlerCode: Buffer;
  readonly #created: Created;
  readonly #abortable: { readonly abortSignal: AbortSignal };
  readonly #streamArn: string;

  constructor(
    clients: RecipeClients,
    options: RecipeOptions & { readonly names: ResourceNames; readonly identity: Identity },
    io: { readonly say: (line: string) => void; readonly signal: AbortSignal; readonly handlerCode: Buffer },
    created: Created,
  ) {
    this.#clients = clients;
    this.#options = options;
    this.#say = io.say;
    this.#signal = io.signal;
    this.#handlerCode = io.handlerCode;
    this.#created = created;
    this.#abortable = { abortSignal: io.signal };
    this.#streamArn = this.#arn("kinesis", `stream/${options.names.stream}`);
  }

  async run(): Promise<RunResult> {
    const roleArn = await this.#createRole();
    const queueUrls = await this.#createQueues();
    const onFailureArn = await this.#onFailureQueueArn(queueUrls.onFailure);
    await this.#putRolePolicy(onFailureArn);
    await this.#createStream();
    await this.#createFunction(roleArn, queueUrls.attempts);
    const sequences = await this.#putRecords();
    await this.#createMapping(onFailureArn);
    return this.#waitAndJudge(queueUrls, sequences);
  }

  #arn(service: string, resource: string): string {
    const { identity, region } = this.#options;
    return `arn:${identity.partition}:${service}:${region}:${identity.account}:${resource}`;
  }

  async #createRole(): Promise<string> {
    const { names } = this.#options;
    const { Role: role } = await this.#created.create(
      `IAM role ${names.role}`,
      () => this.#clients.iam.send(new DeleteRoleCommand({ RoleName: names.role })),
      () =>
        this.#clients.iam.send(
          new CreateRoleCommand({
            RoleName: names.role,
            Description: "Throwaway role of docs/recipes/bisect-partial-split.ts; deleted by the run",
            AssumeRolePolicyDocument: JSON.stringify({
              Version: "2012-10-17",
              Statement: [
                { Effect: "Allow", Principal: { Service: "lambda.amazonaws.com" }, Action: "sts:AssumeRole" },
              ],
            }),
          }),
          this.#abortable,
        ),
    );
    const roleArn = role?.Arn;
    if (!roleArn) throw new Error(`CreateRole ${names.role} answered without an ARN`);
    this.#say(`created IAM role ${roleArn}`);
    return roleArn;
  }

  async #createQueues(): Promise<QueueUrls> {
    const { names } = this.#options;
    const queueUrls: QueueUrls = { onFailure: "", attempts: "" };
    for (const [key, name] of [
      ["onFailure", names.onFailureQueue],
      ["attempts", names.attemptsQueue],
    ] as const) {
      // Deleted by name: a create whose answer never came gives no URL.
      const { QueueUrl } = await this.#created.create(
        `SQS queue ${name}`,
        async () => {
          const { QueueUrl: url } = await this.#clients.sqs.send(new GetQueueUrlCommand({ QueueName: name }));
          return this.#clients.sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
        },
        () => this.#clients.sqs.send(new CreateQueueCommand({ QueueName: name }), this.#abortable),
      );
      if (!QueueUrl) throw new Error(`CreateQueue ${name} answered without a URL`);
      queueUrls[key] = QueueUrl;
      this.#say(`created SQS queue ${name}`);
    }
    return queueUrls;
  }

  async #onFailureQueueArn(onFailureUrl: string): Promise<string> {
    const { Attributes } = await this.#clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: onFailureUrl, AttributeNames: ["QueueArn"] }),
      this.#abortable,
    );
    return Attributes?.QueueArn ?? this.#arn("sqs", this.#options.names.onFailureQueue);
  }

  /**
   * Least privilege: what the mapping needs to read this stream (ListStreams has no resource) and to send
   * to its destination, and what the function needs to send to the attempts queue. No CloudWatch Logs:
   * nothing is left behind in them.
   */
  async #putRolePolicy(onFailureArn: string): Promise<void> {
    const { names } = this.#options;
    await this.#created.create(
      `IAM role policy ${names.policy}`,
      () =>
        this.#clients.iam.send(
          new DeleteRolePolicyCommand({ RoleName: names.role, PolicyName: names.policy }),
        ),
      () =>
        this.#clients.iam.send(
          new PutRolePolicyCommand({
            RoleName: names.role,
            PolicyName: names.policy,
            PolicyDocument: JSON.stringify({
              Version: "2012-10-17",
              Statement: [
                {
                  Effect: "Allow",
                  Action: [
                    "kinesis:DescribeStream",
                    "kinesis:DescribeStreamSummary",
                    "kinesis:GetRecords",
                    "kinesis:GetShardIterator",
                    "kinesis:ListShards",
                  ],
                  Resource: this.#streamArn,
                },
                { Effect: "Allow", Action: "kinesis:ListStreams", Resource: "*" },
                {
                  Effect: "Allow",
                  Action: "sqs:SendMessage",
                  Resource: [onFailureArn, this.#arn("sqs", names.attemptsQueue)],
                },
              ],
            }),
          }),
          this.#abortable,
        ),
    );
    this.#say(`put the inline policy ${names.policy} on ${names.role}`);
  }

  async #createStream(): Promise<void> {
    const { names } = this.#options;
    await this.#created.create(
      `Kinesis stream ${names.stream}`,
      () =>
        whenNotInUse(() =>
          this.#clients.kinesis.send(
            new DeleteStreamCommand({ StreamName: names.stream, EnforceConsumerDeletion: true }),
          ),
        ),
      () =>
        this.#clients.kinesis.send(
          new CreateStreamCommand({ StreamName: names.stream, ShardCount: 1 }),
          this.#abortable,
        ),
    );
    this.#say(`created Kinesis stream ${names.stream}; waiting until it is ACTIVE`);
    await waitUntilStreamExists(
      { client: this.#clients.kinesis, maxWaitTime: 300, abortSignal: this.#signal },
      { StreamName: names.stream },
    );
  }

  async #createFunction(roleArn: string, attemptsUrl: string): Promise<void> {
    const { names } = this.#options;
    const zip = await deterministicZip([{ name: "index.mjs", content: this.#handlerCode }]);
    const fn = await this.#created.create(
      `Lambda function ${names.function}`,
      () => this.#clients.lambda.send(new DeleteFunctionCommand({ FunctionName: names.function })),
      () =>
        untilRolePropagates(
          () =>
            this.#clients.lambda.send(
              new CreateFunctionCommand({
                FunctionName: names.function,
                Runtime: "nodejs22.x",
                Handler: "index.handler",
                Role: roleArn,
                Code: { ZipFile: zip },
                Timeout: 30,
                MemorySize: 128,
                Environment: { Variables: { ATTEMPTS_QUEUE_URL: attemptsUrl } },
                Description: "Throwaway function of docs/recipes/bisect-partial-split.ts; deleted by the run",
              }),
              this.#abortable,
            ),
          this.#signal,
        ),
    );
    this.#say(`created Lambda function ${fn.FunctionArn ?? names.function}; waiting until it is Active`);
    await waitUntilFunctionActiveV2(
      { client: this.#clients.lambda, maxWaitTime: 300, abortSignal: this.#signal },
      { FunctionName: names.function },
    );
  }

  /** The records go in before the mapping exists, so that its first batch holds all of them. */
  async #putRecords(): Promise<string[]> {
    const sequences: string[] = [];
    for (let i = 0; i < this.#options.records; i++) {
      const { SequenceNumber } = await this.#clients.kinesis.send(
        new PutRecordCommand({
          StreamName: this.#options.names.stream,
          PartitionKey: "probe",
          Data: new TextEncoder().encode(JSON.stringify({ probe: i })),
        }),
        this.#abortable,
      );
      if (!SequenceNumber) throw new Error(`PutRecord ${i} answered without a sequence number`);
      sequences.push(SequenceNumber);
      this.#say(`put record ${i}: sequence number ${SequenceNumber}`);
    }
    return sequences;
  }

  async #createMapping(onFailureArn: string): Promise<void> {
    const { names, records, maxRetries } = this.#options;
    // Read by the deletion when it runs: undefined until the answer that holds it comes.
    let uuid: string | undefined;
    const mapping = await this.#created.create(
      "event source mapping",
      () =>
        deleteMappings(this.#clients.lambda, uuid, {
          FunctionName: names.function,
          EventSourceArn: this.#streamArn,
        }),
      () =>
        untilRolePropagates(
          () =>
            this.#clients.lambda.send(
              new CreateEventSourceMappingCommand({
                FunctionName: names.function,
                EventSourceArn: this.#streamArn,
                StartingPosition: "TRIM_HORIZON",
                BatchSize: records,
                BisectBatchOnFunctionError: true,
                FunctionResponseTypes: ["ReportBatchItemFailures"],
                MaximumRetryAttempts: maxRetries,
                DestinationConfig: { OnFailure: { Destination: onFailureArn } },
              }),
              this.#abortable,
            ),
          this.#signal,
        ),
    );
    uuid = mapping.UUID;
    if (!uuid) throw new Error("CreateEventSourceMapping answered without a UUID");
    this.#say(`created event source mapping ${uuid} (state ${mapping.State ?? "unknown"})`);
  }

  async #waitAndJudge(queueUrls: QueueUrls, sequences: readonly string[]): Promise<RunResult> {
    const { records, maxRetries, waitSeconds } = this.#options;
    this.#say(
      `waiting up to ${waitSeconds} s for the on-failure record that ends at record ${records - 1} (Ctrl-C deletes everything and stops)`,
    );
    const observation = await observe(
      this.#clients.sqs,
      queueUrls,
      sequences.at(-1) as string,
      { deadline: Date.now() + waitSeconds * 1000, signal: this.#signal },
      this.#say,
    );
    const judged = observation.complete
      ? verdict(outcomeOf(observation, sequences), records, maxRetries)
      : {
          matches: "neither" as const,
          lines: [
            `no on-failure record ending at record ${records - 1} within ${waitSeconds} s (${observation.attempts.length} invocations recorded): nothing to judge`,
          ],
        };
    for (const line of judged.lines) this.#say(line);
    return { observation, sequences, verdict: judged };
  }
}

/** The command line: plan, and with --yes the run; signals end the wait and still delete everything. */
export async function main(argv: readonly string[]): Promise<number> {
  let options: RecipeOptions | "help";
  try {
    options = parseOptions(argv, process.env);
  } catch (error) {
    return refuseCommandLine(error, USAGE);
  }
  if (options === "help") {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.Ok;
  }
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const clients = clientsFor(options.region);
  let identity: Identity;
  try {
    identity = await identityOf(clients.sts);
  } catch (error) {
    process.stderr.write(
      `cannot tell whose account this is (STS GetCallerIdentity): ${(error as Error).name}: ${(error as Error).message}\nnothing created\n`,
    );
    return ExitCode.Failed;
  }
  const names = namesFor(options.prefix, randomBytes(3).toString("hex"));
  for (const line of planLines(identity, options, names)) say(line);
  if (!options.yes) {
    say("dry run: nothing created; run again with --yes to create, run and delete it");
    return ExitCode.Ok;
  }
  const interrupt = new AbortController();
  const onSignal = () => {
    if (interrupt.signal.aborted) {
      process.stderr.write("interrupted again: exiting now; what was created may be left (see above)\n");
      process.exit(130);
    }
    process.stderr.write("interrupted: deleting what was created (interrupt again to leave it)\n");
    interrupt.abort(new Error("interrupted"));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const handlerCode = await readFile(join(import.meta.dirname, "bisect-partial-split.handler.mjs"));
  const { result, left, error } = await runRecipe(
    clients,
    { ...options, names, identity },
    { say, signal: interrupt.signal, handlerCode },
  );
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);
  if (error !== undefined && !interrupt.signal.aborted) {
    process.stderr.write(
      `failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}\n`,
    );
  }
  if (left.length > 0) {
    process.stderr.write(`could not delete, delete by hand:\n${left.map((l) => `  ${l}`).join("\n")}\n`);
    return 3;
  }
  if (interrupt.signal.aborted) return 130;
  return error === undefined && result?.observation.complete ? ExitCode.Ok : ExitCode.Failed;
}

runIfMain(import.meta.url, main, ExitCode.Failed);
