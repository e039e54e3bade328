/**
 * `lint:config --live`: the settings of a deployed environment, read through the AWS APIs instead of the
 * files, so the same rules check what is actually running (drift, console edits). Needs credentials
 * that may read Lambda, SQS and Kinesis configuration. The tests read an environment deployed in moto's
 * server (test/integration/config-lint/live.test.ts; there is no account on the machines that run them),
 * and what it says without credentials.
 */
import { DescribeStreamSummaryCommand, KinesisClient } from "@aws-sdk/client-kinesis";
import {
  GetFunctionConcurrencyCommand,
  GetFunctionConfigurationCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
} from "@aws-sdk/client-lambda";
import { GetQueueAttributesCommand, GetQueueUrlCommand, SQSClient } from "@aws-sdk/client-sqs";
import { queueNameOfArn } from "@mcp-pipeline/aws/arn";
import {
  type EnvironmentSettings,
  QUEUE_KEYS,
  resourceNames,
  type SqsConsumerKey,
  testTools,
} from "@mcp-pipeline/settings";

/** Why the deployed settings could not be read: a setup problem of the caller's, not a finding. */
export const LiveReadProblem = {
  /** No credentials anywhere the SDK looks (environment, profile, SSO, container, instance). */
  NoCredentials: "no-credentials",
  /** Credentials AWS does not accept (expired, unknown, mistyped). */
  RejectedCredentials: "rejected-credentials",
  /** Credentials that may not read what --live reads. */
  Denied: "denied",
  /** The endpoints did not answer (no network, a wrong region). */
  Unreachable: "unreachable",
} as const;
export type LiveReadProblem = (typeof LiveReadProblem)[keyof typeof LiveReadProblem];

/** `lint:config --live` could not read the deployed settings; the message is one line that says what to do. */
export class LiveReadError extends Error {
  readonly problem: LiveReadProblem;
  readonly region: string;
  constructor(problem: LiveReadProblem, region: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "LiveReadError";
    this.problem = problem;
    this.region = region;
  }
}

const REJECTED = new Set([
  "ExpiredToken",
  "ExpiredTokenException",
  "InvalidClientTokenId",
  "UnrecognizedClientException",
  "InvalidSignatureException",
  "SignatureDoesNotMatch",
  "IncompleteSignature",
]);
const DENIED = new Set(["AccessDenied", "AccessDeniedException", "AuthorizationError"]);
const UNREACHABLE = new Set(["ENOTFOUND", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EAI_AGAIN"]);

const SET_CREDENTIALS =
  "set AWS_PROFILE (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, with AWS_SESSION_TOKEN for temporary ones)";

/** The SDK's error as the one line a person needs, or undefined when it is not a setup problem. */
export function liveReadError(error: unknown, region: string): LiveReadError | undefined {
  if (!(error instanceof Error)) return undefined;
  // The Kinesis client's HTTP/2 handler reports a refused connection as a cancelled stream caused by it.
  const codeOf = (e: unknown) => (e instanceof Error ? ((e as NodeJS.ErrnoException).code ?? "") : "");
  const code = UNREACHABLE.has(codeOf(error.cause)) ? codeOf(error.cause) : codeOf(error);
  const detail = error.message.split("\n")[0];
  if (error.name === "CredentialsProviderError")
    return new LiveReadError(
      LiveReadProblem.NoCredentials,
      region,
      `--live reads the deployed environment through the AWS APIs and found no credentials: ${SET_CREDENTIALS} for the account it runs in, then run the command again`,
      { cause: error },
    );
  if (REJECTED.has(error.name))
    return new LiveReadError(
      LiveReadProblem.RejectedCredentials,
      region,
      `--live: AWS refused the credentials (${error.name}: ${detail}); ${SET_CREDENTIALS} to valid ones`,
      { cause: error },
    );
  if (DENIED.has(error.name))
    return new LiveReadError(
      LiveReadProblem.Denied,
      region,
      `--live: the credentials may not read the environment's configuration (${error.name}: ${detail}); use a role that may read Lambda, SQS and Kinesis configuration (the plan role of docs/deploy.md)`,
      { cause: error },
    );
  if (UNREACHABLE.has(code) || error.name === "TimeoutError")
    return new LiveReadError(
      LiveReadProblem.Unreachable,
      region,
      `--live: AWS did not answer in ${region} (${code || error.name}: ${detail}); check the network and --region`,
      { cause: error },
    );
  return undefined;
}

/**
 * The file's settings with every value AWS can report replaced by the deployed one. A setup problem
 * (credentials, permissions, network) is a LiveReadError whose message says what to do.
 */
export async function liveSettings(file: EnvironmentSettings, region: string): Promise<EnvironmentSettings> {
  try {
    return await readLive(file, region);
  } catch (error) {
    throw liveReadError(error, region) ?? error;
  }
}

async function readLive(file: EnvironmentSettings, region: string): Promise<EnvironmentSettings> {
  const lambda = new LambdaClient({ region });
  const sqs = new SQSClient({ region });
  const kinesis = new KinesisClient({ region });
  const names = resourceNames(file.name_prefix);
  const live = structuredClone(file) as EnvironmentSettings & Record<string, unknown>;

  live.stream.retention_period_hours =
    (await streamRetentionHours(kinesis, names.stream)) ?? file.stream.retention_period_hours;
  applyProcessor(live.processor, await functionSettings(lambda, names.functions.processor));
  for (const queue of QUEUE_KEYS) {
    const { name: queueName, consumer } = names.queues[queue];
    // A consumer that is not deployed (or may not be read) keeps the file's settings, its queue's too.
    const deployed = await functionSettings(lambda, names.functions[consumer]).catch(() => undefined);
    if (!deployed) continue;
    applySqsConsumer(live[consumer], deployed);
    live[consumer].queue = await queueSettings(sqs, queueName);
  }
  live.test_tools = await testToolsDeployed(lambda, names.functions);
  for (const client of [lambda, sqs, kinesis]) client.destroy();
  return live;
}

async function streamRetentionHours(kinesis: KinesisClient, streamName: string): Promise<number | undefined> {
  const { StreamDescriptionSummary: stream } = await kinesis.send(
    new DescribeStreamSummaryCommand({ StreamName: streamName }),
  );
  return stream?.RetentionPeriodHours;
}

/** A deployed function's configuration, reserved concurrency and (first) event source mapping. */
type DeployedFunction = Awaited<ReturnType<typeof functionSettings>>;

async function functionSettings(lambda: LambdaClient, name: string) {
  const fn = await lambda.send(new GetFunctionConfigurationCommand({ FunctionName: name }));
  const concurrency = await lambda.send(new GetFunctionConcurrencyCommand({ FunctionName: name }));
  const { EventSourceMappings = [] } = await lambda.send(
    new ListEventSourceMappingsCommand({ FunctionName: name }),
  );
  return { fn, reserved: concurrency.ReservedConcurrentExecutions ?? null, esm: EventSourceMappings[0] };
}

/**
 * The processor's deployed settings over the file's. A mapping setting AWS leaves out has AWS's default;
 * only the batch size falls back to the file's.
 */
function applyProcessor(processor: EnvironmentSettings["processor"], deployed: DeployedFunction): void {
  processor.timeout_seconds = deployed.fn.Timeout ?? processor.timeout_seconds;
  processor.reserved_concurrency = deployed.reserved;
  const e = deployed.esm;
  if (!e) return;
  processor.esm = {
    ...processor.esm,
    batch_size: e.BatchSize ?? processor.esm.batch_size,
    maximum_batching_window_in_seconds: e.MaximumBatchingWindowInSeconds ?? 0,
    parallelization_factor: e.ParallelizationFactor ?? 1,
    maximum_retry_attempts: e.MaximumRetryAttempts ?? -1,
    maximum_record_age_in_seconds: e.MaximumRecordAgeInSeconds ?? -1,
    bisect_batch_on_function_error: e.BisectBatchOnFunctionError ?? false,
    report_batch_item_failures: (e.FunctionResponseTypes ?? []).includes("ReportBatchItemFailures"),
    on_failure_destination: Boolean(e.DestinationConfig?.OnFailure?.Destination),
  };
}

/** An SQS consumer's deployed function and mapping settings over the file's. */
function applySqsConsumer(target: EnvironmentSettings[SqsConsumerKey], deployed: DeployedFunction): void {
  target.timeout_seconds = deployed.fn.Timeout ?? target.timeout_seconds;
  target.reserved_concurrency = deployed.reserved;
  if (!deployed.esm) return;
  target.esm = {
    batch_size: deployed.esm.BatchSize ?? target.esm.batch_size,
    maximum_batching_window_in_seconds: deployed.esm.MaximumBatchingWindowInSeconds ?? 0,
    maximum_concurrency: deployed.esm.ScalingConfig?.MaximumConcurrency ?? null,
    report_batch_item_failures: (deployed.esm.FunctionResponseTypes ?? []).includes(
      "ReportBatchItemFailures",
    ),
  };
}

/** A queue's deployed attributes and its DLQ's retention; SQS's defaults where an attribute is missing. */
async function queueSettings(
  sqs: SQSClient,
  queueName: string,
): Promise<EnvironmentSettings[SqsConsumerKey]["queue"]> {
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: queueName }));
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl,
      AttributeNames: ["VisibilityTimeout", "MessageRetentionPeriod", "RedrivePolicy"],
    }),
  );
  const redrive = JSON.parse(Attributes.RedrivePolicy ?? "{}") as {
    deadLetterTargetArn?: string;
    maxReceiveCount?: number;
  };
  const dlqName = redrive.deadLetterTargetArn && queueNameOfArn(redrive.deadLetterTargetArn);
  const dlq = dlqName
    ? await sqs
        .send(new GetQueueUrlCommand({ QueueName: dlqName }))
        .then(({ QueueUrl: url }) =>
          sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["MessageRetentionPeriod"] }),
          ),
        )
    : undefined;
  return {
    visibility_timeout_seconds: Number(Attributes.VisibilityTimeout ?? 30),
    message_retention_seconds: Number(Attributes.MessageRetentionPeriod ?? 345_600),
    max_receive_count: redrive.maxReceiveCount ?? 0,
    dlq_message_retention_seconds: Number(dlq?.Attributes?.MessageRetentionPeriod ?? 0),
  };
}

/** Test tools are on where a deployed worker's environment says so, whatever the file says. */
async function testToolsDeployed(
  lambda: LambdaClient,
  functions: ReturnType<typeof resourceNames>["functions"],
): Promise<boolean> {
  const workers = await Promise.all(
    testTools.functions.map(async (key) => {
      const configuration = await lambda
        .send(new GetFunctionConfigurationCommand({ FunctionName: functions[key] }))
        .catch(() => undefined);
      return configuration?.Environment?.Variables?.[testTools.variable(key) ?? ""];
    }),
  );
  return workers.some((value) => testTools.isOn(value));
}
