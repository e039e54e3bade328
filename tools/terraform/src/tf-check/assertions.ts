/**
 * After `terraform apply`: what the emulator now holds, read with the AWS SDK, against what
 * terraform.tfvars.json says (read through @mcp-pipeline/settings). Each finding names the resource,
 * the setting and both values; an empty list means the environment is what its settings say.
 */
import { CloudWatchClient, DescribeAlarmsCommand, type MetricAlarm } from "@aws-sdk/client-cloudwatch";
import {
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ListTablesCommand,
  UpdateTableCommand,
} from "@aws-sdk/client-dynamodb";
import {
  GetPolicyCommand,
  GetRoleCommand,
  IAMClient,
  ListOpenIDConnectProvidersCommand,
} from "@aws-sdk/client-iam";
import {
  DescribeStreamSummaryCommand,
  KinesisClient,
  ListStreamConsumersCommand,
} from "@aws-sdk/client-kinesis";
import { GetKeyPolicyCommand, KMSClient } from "@aws-sdk/client-kms";
import {
  type EventSourceMappingConfiguration,
  GetEventSourceMappingCommand,
  GetFunctionConfigurationCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
} from "@aws-sdk/client-lambda";
import {
  GetBucketEncryptionCommand,
  GetBucketPolicyCommand,
  GetBucketVersioningCommand,
  GetPublicAccessBlockCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { GetTopicAttributesCommand, SNSClient } from "@aws-sdk/client-sns";
import { GetQueueAttributesCommand, GetQueueUrlCommand, SQSClient } from "@aws-sdk/client-sqs";
import {
  type EnvironmentSettings,
  FUNCTION_KEYS,
  functionEnvironment,
  QUEUE_KEYS,
  type QueueSettings,
  resourceNames,
  type SqsEsmSettings,
} from "@mcp-pipeline/settings";
import { NodeHttpHandler } from "@smithy/node-http-handler";

export interface Endpoints {
  /** moto itself: what the emulator holds, not what the proxy remembers. */
  readonly emulator: string;
  /** The proxy, for CloudWatch only: the JavaScript SDK speaks RPC v2 CBOR to it too. */
  readonly proxy: string;
}

const credentials = { accessKeyId: "test", secretAccessKey: "test" };

/** moto's account: every root under check is applied in it. */
const ACCOUNT = "123456789012";

/** The AWS-managed SNS key: CloudWatch alarms cannot publish to a topic encrypted with it. */
export const AWS_MANAGED_SNS_KEY = "alias/aws/sns";

function expectEqual(findings: string[], what: string, actual: unknown, expected: unknown): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected))
    findings.push(
      `${what}: the emulator holds ${JSON.stringify(actual)}, the settings say ${JSON.stringify(expected)}`,
    );
}

/**
 * The alarm topic must be encrypted with a key whose policy lets CloudWatch use it. Exported for its own
 * test: a topic on the AWS-managed key (modules/alarms before the fix) fails here.
 */
export function alarmTopicFindings(topicKey: string | undefined, keyPolicy: string | undefined): string[] {
  if (topicKey === undefined || topicKey === "") return ["alarm topic: not encrypted"];
  if (topicKey === AWS_MANAGED_SNS_KEY || topicKey.endsWith(`:${AWS_MANAGED_SNS_KEY}`))
    return [
      `alarm topic: encrypted with ${AWS_MANAGED_SNS_KEY}, whose key policy does not let cloudwatch.amazonaws.com publish: alarm notifications would never be delivered`,
    ];
  const statements = (JSON.parse(keyPolicy ?? "{}") as { Statement?: unknown[] }).Statement ?? [];
  const allowsCloudWatch = statements.some((s) => {
    const st = s as {
      Effect?: string;
      Principal?: { Service?: string | string[] };
      Action?: string | string[];
    };
    const services = [st.Principal?.Service ?? []].flat();
    const actions = [st.Action ?? []].flat();
    return (
      st.Effect === "Allow" &&
      services.includes("cloudwatch.amazonaws.com") &&
      actions.includes("kms:Decrypt") &&
      actions.some((a) => a === "kms:GenerateDataKey*" || a === "kms:GenerateDataKey")
    );
  });
  return allowsCloudWatch
    ? []
    : [
        `alarm topic: the policy of key ${topicKey} does not allow cloudwatch.amazonaws.com kms:Decrypt and kms:GenerateDataKey*`,
      ];
}

/**
 * A function's environment as applied against what terraform/modules/pipeline/function-environment.json
 * declares for it (@mcp-pipeline/settings' functionEnvironment): every variable missing, extra or different.
 * A queue URL is compared by its path, the account and the queue: its host is the endpoint that created it.
 */
export function functionEnvironmentFindings(
  name: string,
  applied: Readonly<Record<string, string>>,
  declared: Readonly<Record<string, string>>,
): string[] {
  const comparable = (value: string | undefined) =>
    value !== undefined && /^https?:\/\/[^/]+\/\d{12}\/[^/]+$/.test(value) ? new URL(value).pathname : value;
  return [...new Set([...Object.keys(declared), ...Object.keys(applied)])].sort().flatMap((variable) => {
    const [got, want] = [applied[variable], declared[variable]];
    if (want === undefined) return [`${name} environment: ${variable} is set, and nothing declares it`];
    if (got === undefined) return [`${name} environment: ${variable} is declared (${want}), and not set`];
    return comparable(got) === comparable(want)
      ? []
      : [
          `${name} environment: ${variable} is ${JSON.stringify(got)}, the declaration says ${JSON.stringify(want)}`,
        ];
  });
}

/** The clients one check of an environment reads through: moto itself, and CloudWatch through the proxy. */
interface Clients {
  readonly config: { region: string; credentials: typeof credentials; endpoint: string };
  readonly proxy: string;
  readonly lambda: LambdaClient;
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
  readonly sns: SNSClient;
  readonly kms: KMSClient;
  readonly cloudwatch: CloudWatchClient;
}

/** A worker queue under check: its name without the FIFO suffix, whether it is FIFO, and its settings. */
type WorkerQueue = readonly [name: string, fifo: boolean, settings: QueueSettings];

/** An alarm the settings call for: its metric, its one dimension and its threshold. */
interface ExpectedAlarm {
  readonly name: string;
  readonly metric: string;
  readonly dimension: [string, string];
  readonly threshold: number;
}

/** The event source mappings of one function, by name. */
type MappingsOf = (functionName: string) => EventSourceMappingConfiguration[];

export async function environmentFindings(
  settings: EnvironmentSettings,
  endpoints: Endpoints,
  outputs: { alarmTopicArn: string; streamName: string },
): Promise<string[]> {
  const clients = openClients(settings.region, endpoints);
  const p = settings.name_prefix;
  const mappings = await mappingsByFunction(clients.lambda);
  const queues = workerQueues(settings);
  const { findings, arns } = await queueFindings(clients.sqs, queues);
  const processorEsm = mappings(`${p}-processor`);
  findings.push(...(await processorEsmFindings(clients, settings, outputs.streamName, processorEsm, arns)));
  findings.push(...sqsEsmFindings(settings, mappings, arns));
  findings.push(...(await functionEnvironmentsFindings(clients, settings)));
  findings.push(...(await dedupeTableFindings(clients.dynamodb, p)));
  findings.push(...(await alarmTopicKeyFindings(clients, outputs.alarmTopicArn)));
  const expected = expectedAlarms(settings, queues, processorEsm[0]?.UUID);
  findings.push(...(await alarmFindings(clients.cloudwatch, p, expected, outputs.alarmTopicArn)));
  for (const c of [
    clients.lambda,
    clients.sqs,
    clients.dynamodb,
    clients.sns,
    clients.kms,
    clients.cloudwatch,
  ])
    c.destroy();
  return findings;
}

function openClients(region: string, endpoints: Endpoints): Clients {
  const config = { region, credentials, endpoint: endpoints.emulator };
  return {
    config,
    proxy: endpoints.proxy,
    lambda: new LambdaClient(config),
    sqs: new SQSClient(config),
    dynamodb: new DynamoDBClient(config),
    sns: new SNSClient(config),
    kms: new KMSClient(config),
    cloudwatch: new CloudWatchClient({ ...config, endpoint: endpoints.proxy }),
  };
}

/**
 * Every mapping, matched by function ARN: moto filters ListEventSourceMappings by FunctionName exactly as
 * the mapping was created (the pipeline passes ARNs), where AWS accepts a name or an ARN.
 */
async function mappingsByFunction(lambda: LambdaClient): Promise<MappingsOf> {
  const allMappings: EventSourceMappingConfiguration[] = [];
  let marker: string | undefined;
  do {
    const page = await lambda.send(new ListEventSourceMappingsCommand({ Marker: marker }));
    allMappings.push(...(page.EventSourceMappings ?? []));
    marker = page.NextMarker;
  } while (marker !== undefined);
  return (functionName) =>
    allMappings.filter((m) => (m.FunctionArn ?? "").endsWith(`:function:${functionName}`));
}

function workerQueues(settings: EnvironmentSettings): WorkerQueue[] {
  const p = settings.name_prefix;
  return [
    [`${p}-tool-jobs`, false, settings.tool_worker.queue],
    [`${p}-session-jobs`, true, settings.fifo_worker.queue],
    [`${p}-stream-failures`, false, settings.dlq_redrive.queue],
  ];
}

async function queueAttributes(sqs: SQSClient, name: string): Promise<Record<string, string>> {
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["All"] }));
  return Attributes ?? {};
}

/**
 * Queues: redrive policy (DLQ and receive count), visibility timeout, retention of source and DLQ. Also
 * gives each source queue's ARN, which the mappings must read.
 */
async function queueFindings(
  sqs: SQSClient,
  queues: readonly WorkerQueue[],
): Promise<{ findings: string[]; arns: Map<string, string> }> {
  const f: string[] = [];
  const arns = new Map<string, string>();
  for (const [name, fifo, q] of queues) {
    const suffix = fifo ? ".fifo" : "";
    const source = await queueAttributes(sqs, `${name}${suffix}`);
    const dlq = await queueAttributes(sqs, `${name}-dlq${suffix}`);
    arns.set(name, source.QueueArn ?? "");
    expectEqual(
      f,
      `${name} VisibilityTimeout`,
      Number(source.VisibilityTimeout),
      q.visibility_timeout_seconds,
    );
    expectEqual(
      f,
      `${name} MessageRetentionPeriod`,
      Number(source.MessageRetentionPeriod),
      q.message_retention_seconds,
    );
    expectEqual(
      f,
      `${name}-dlq MessageRetentionPeriod`,
      Number(dlq.MessageRetentionPeriod),
      q.dlq_message_retention_seconds,
    );
    const redrive = JSON.parse(source.RedrivePolicy ?? "{}") as {
      deadLetterTargetArn?: string;
      maxReceiveCount?: unknown;
    };
    expectEqual(f, `${name} RedrivePolicy.deadLetterTargetArn`, redrive.deadLetterTargetArn, dlq.QueueArn);
    expectEqual(
      f,
      `${name} RedrivePolicy.maxReceiveCount`,
      Number(redrive.maxReceiveCount),
      q.max_receive_count,
    );
    if (fifo) expectEqual(f, `${name} FifoQueue`, source.FifoQueue, "true");
  }
  return { findings: f, arns };
}

/** The processor's enhanced fan-out consumer, and the source its mapping reports through the proxy. */
async function processorSource(
  clients: Clients,
  p: string,
  streamName: string,
  processorEsm: readonly EventSourceMappingConfiguration[],
): Promise<{ consumer: string | undefined; reported: string | undefined }> {
  const kinesis = new KinesisClient({ ...clients.config, requestHandler: new NodeHttpHandler() });
  const streamArn = (await kinesis.send(new DescribeStreamSummaryCommand({ StreamName: streamName })))
    .StreamDescriptionSummary?.StreamARN;
  const consumers =
    (await kinesis.send(new ListStreamConsumersCommand({ StreamARN: streamArn }))).Consumers ?? [];
  kinesis.destroy();
  const consumer = consumers.find((c) => c.ConsumerName === `${p}-processor`)?.ConsumerARN;
  const viaProxy = new LambdaClient({ ...clients.config, endpoint: clients.proxy });
  const reported =
    processorEsm[0]?.UUID === undefined
      ? undefined
      : (await viaProxy.send(new GetEventSourceMappingCommand({ UUID: processorEsm[0].UUID })))
          .EventSourceArn;
  viaProxy.destroy();
  return { consumer, reported };
}

/** The processor's Kinesis ESM: every guard of docs/aws-semantics.md §1 as the settings say. */
async function processorEsmFindings(
  clients: Clients,
  settings: EnvironmentSettings,
  streamName: string,
  processorEsm: readonly EventSourceMappingConfiguration[],
  arns: ReadonlyMap<string, string>,
): Promise<string[]> {
  const p = settings.name_prefix;
  const k = settings.processor.esm;
  const { consumer, reported } = await processorSource(clients, p, streamName, processorEsm);
  const f: string[] = [];
  expectEqual(f, "processor: number of event source mappings", processorEsm.length, 1);
  const m = processorEsm[0] ?? {};
  // moto holds the mapping on the stream either way (it refuses consumer ARNs; the proxy maps it to the
  // consumer's stream): with enhanced fan-out, the consumer must exist and be what Lambda reports.
  const stream = `:stream/${streamName}`;
  if (!(m.EventSourceArn ?? "").endsWith(stream))
    f.push(`processor ESM EventSourceArn: ${m.EventSourceArn} does not read ${stream}`);
  if (k.enhanced_fan_out) {
    if (consumer === undefined)
      f.push(`processor: no enhanced fan-out consumer ${p}-processor on the stream`);
    else expectEqual(f, "processor ESM EventSourceArn as Lambda reports it", reported, consumer);
  } else if (consumer !== undefined)
    f.push(`processor: an enhanced fan-out consumer exists though enhanced_fan_out is false`);
  expectEqual(f, "processor ESM BatchSize", m.BatchSize, k.batch_size);
  expectEqual(
    f,
    "processor ESM MaximumBatchingWindowInSeconds",
    m.MaximumBatchingWindowInSeconds,
    k.maximum_batching_window_in_seconds,
  );
  expectEqual(f, "processor ESM ParallelizationFactor", m.ParallelizationFactor, k.parallelization_factor);
  expectEqual(f, "processor ESM StartingPosition", m.StartingPosition, k.starting_position);
  expectEqual(f, "processor ESM MaximumRetryAttempts", m.MaximumRetryAttempts, k.maximum_retry_attempts);
  expectEqual(
    f,
    "processor ESM MaximumRecordAgeInSeconds",
    m.MaximumRecordAgeInSeconds,
    k.maximum_record_age_in_seconds,
  );
  expectEqual(
    f,
    "processor ESM BisectBatchOnFunctionError",
    m.BisectBatchOnFunctionError,
    k.bisect_batch_on_function_error,
  );
  expectEqual(
    f,
    "processor ESM FunctionResponseTypes",
    m.FunctionResponseTypes ?? [],
    k.report_batch_item_failures ? ["ReportBatchItemFailures"] : [],
  );
  expectEqual(
    f,
    "processor ESM DestinationConfig.OnFailure.Destination",
    m.DestinationConfig?.OnFailure?.Destination,
    k.on_failure_destination ? arns.get(`${p}-stream-failures`) : undefined,
  );
  return f;
}

/** The SQS ESMs: batch, window, partial batch responses, maximum concurrency, source queue. */
function sqsEsmFindings(
  settings: EnvironmentSettings,
  mappings: MappingsOf,
  arns: ReadonlyMap<string, string>,
): string[] {
  const p = settings.name_prefix;
  const sqsEsms: [string, string, SqsEsmSettings, boolean][] = [
    ["tool-worker", `${p}-tool-jobs`, settings.tool_worker.esm, false],
    ["fifo-worker", `${p}-session-jobs`, settings.fifo_worker.esm, true],
    ["dlq-redrive", `${p}-stream-failures`, settings.dlq_redrive.esm, false],
  ];
  const f: string[] = [];
  for (const [fn, queue, e, fifo] of sqsEsms) {
    const found = mappings(`${p}-${fn}`);
    expectEqual(f, `${fn}: number of event source mappings`, found.length, 1);
    const m = found[0] ?? {};
    expectEqual(f, `${fn} ESM EventSourceArn`, m.EventSourceArn, arns.get(queue));
    expectEqual(f, `${fn} ESM BatchSize`, m.BatchSize, e.batch_size);
    // FIFO sources take no batching window (§3): the module leaves it unset.
    if (!fifo)
      expectEqual(
        f,
        `${fn} ESM MaximumBatchingWindowInSeconds`,
        m.MaximumBatchingWindowInSeconds ?? 0,
        e.maximum_batching_window_in_seconds,
      );
    expectEqual(
      f,
      `${fn} ESM FunctionResponseTypes`,
      m.FunctionResponseTypes ?? [],
      e.report_batch_item_failures ? ["ReportBatchItemFailures"] : [],
    );
    expectEqual(
      f,
      `${fn} ESM ScalingConfig.MaximumConcurrency`,
      m.ScalingConfig?.MaximumConcurrency ?? null,
      e.maximum_concurrency,
    );
  }
  return f;
}

/** Each function's environment: what function-environment.json declares, with this environment's resources. */
async function functionEnvironmentsFindings(
  clients: Clients,
  settings: EnvironmentSettings,
): Promise<string[]> {
  const names = resourceNames(settings.name_prefix, { accountId: ACCOUNT });
  const findings: string[] = [];
  for (const fn of FUNCTION_KEYS) {
    const consumed = QUEUE_KEYS.find((queue) => names.queues[queue].consumer === fn);
    const deadLetterQueueUrl =
      consumed === undefined
        ? undefined
        : (await clients.sqs.send(new GetQueueUrlCommand({ QueueName: names.queues[consumed].dlqName })))
            .QueueUrl;
    const declared = functionEnvironment(fn, {
      settings,
      names,
      ...(deadLetterQueueUrl === undefined ? {} : { deadLetterQueueUrl }),
    });
    const applied = await clients.lambda.send(
      new GetFunctionConfigurationCommand({ FunctionName: names.functions[fn] }),
    );
    findings.push(
      ...functionEnvironmentFindings(names.functions[fn], applied.Environment?.Variables ?? {}, declared),
    );
  }
  return findings;
}

/** The dedupe table: TTL on expiresAt (what @mcp-pipeline/tool-calls/idempotency writes), deletion protection on. */
async function dedupeTableFindings(dynamodb: DynamoDBClient, p: string): Promise<string[]> {
  const ttl = await dynamodb.send(new DescribeTimeToLiveCommand({ TableName: `${p}-dedupe` }));
  const tables = await Promise.all(
    [`${p}-dedupe`, `${p}-tool-calls`].map((t) => dynamodb.send(new DescribeTableCommand({ TableName: t }))),
  );
  const f: string[] = [];
  expectEqual(f, `${p}-dedupe TimeToLiveStatus`, ttl.TimeToLiveDescription?.TimeToLiveStatus, "ENABLED");
  expectEqual(f, `${p}-dedupe TTL AttributeName`, ttl.TimeToLiveDescription?.AttributeName, "expiresAt");
  for (const t of tables)
    expectEqual(
      f,
      `${t.Table?.TableName} DeletionProtectionEnabled`,
      t.Table?.DeletionProtectionEnabled,
      true,
    );
  return f;
}

/** The alarm topic's key: one CloudWatch may use (alarmTopicFindings). */
async function alarmTopicKeyFindings(clients: Clients, alarmTopicArn: string): Promise<string[]> {
  const topic = await clients.sns.send(new GetTopicAttributesCommand({ TopicArn: alarmTopicArn }));
  const topicKey = topic.Attributes?.KmsMasterKeyId;
  let keyPolicy: string | undefined;
  if (topicKey !== undefined && !topicKey.includes(AWS_MANAGED_SNS_KEY))
    keyPolicy = (await clients.kms.send(new GetKeyPolicyCommand({ KeyId: topicKey, PolicyName: "default" })))
      .Policy;
  return alarmTopicFindings(topicKey, keyPolicy);
}

/** The alarms the settings call for: the metrics docs/deploy.md and docs/operations.md name. */
function expectedAlarms(
  settings: EnvironmentSettings,
  queues: readonly WorkerQueue[],
  esmUuid: string | undefined,
): ExpectedAlarm[] {
  const functions: [string, number][] = [
    ["processor", settings.processor.timeout_seconds],
    ["tool-worker", settings.tool_worker.timeout_seconds],
    ["fifo-worker", settings.fifo_worker.timeout_seconds],
    ["dlq-redrive", settings.dlq_redrive.timeout_seconds],
  ];
  return [
    ...streamAlarms(settings, esmUuid),
    ...queues.flatMap((queue) => queueAlarms(settings, queue)),
    ...functions.flatMap(([fn, timeout]) => functionAlarms(settings, fn, timeout)),
  ];
}

/** The stream's side: the processor falling behind, events dropped or given up, records lost. */
function streamAlarms(settings: EnvironmentSettings, esmUuid: string | undefined): ExpectedAlarm[] {
  const p = settings.name_prefix;
  return [
    {
      name: `${p}-processor-iterator-age`,
      metric: "IteratorAge",
      dimension: ["FunctionName", `${p}-processor`],
      threshold: settings.alarms.iterator_age_ms,
    },
    {
      name: `${p}-processor-dropped-events`,
      metric: "DroppedEventCount",
      dimension: ["EventSourceMappingUUID", esmUuid ?? "?"],
      threshold: 0,
    },
    {
      name: `${p}-processor-records-to-failure-queue`,
      metric: "OnFailureDestinationDeliveredEventCount",
      dimension: ["EventSourceMappingUUID", esmUuid ?? "?"],
      threshold: 0,
    },
    { name: `${p}-records-lost`, metric: "RecordsLost", dimension: ["service", "dlq-redrive"], threshold: 0 },
  ];
}

/** A worker queue's: messages in its DLQ, their age, and the age of the queue's oldest message. */
function queueAlarms(settings: EnvironmentSettings, [name, fifo, q]: WorkerQueue): ExpectedAlarm[] {
  const p = settings.name_prefix;
  const key = name.slice(p.length + 1);
  const suffix = fifo ? ".fifo" : "";
  return [
    {
      name: `${p}-${key}-dlq-messages`,
      metric: "ApproximateNumberOfMessagesVisible",
      dimension: ["QueueName", `${name}-dlq${suffix}`],
      threshold: 0,
    },
    {
      name: `${p}-${key}-dlq-age`,
      metric: "ApproximateAgeOfOldestMessage",
      dimension: ["QueueName", `${name}-dlq${suffix}`],
      threshold: settings.alarms.dlq_oldest_message_age_seconds,
    },
    {
      name: `${p}-${key}-queue-age`,
      metric: "ApproximateAgeOfOldestMessage",
      dimension: ["QueueName", `${name}${suffix}`],
      threshold: q.visibility_timeout_seconds * 2,
    },
  ];
}

/** A function's: errors, throttles, and a duration near its timeout. */
function functionAlarms(settings: EnvironmentSettings, fn: string, timeout: number): ExpectedAlarm[] {
  const p = settings.name_prefix;
  return [
    { name: `${p}-${fn}-errors`, metric: "Errors", dimension: ["FunctionName", `${p}-${fn}`], threshold: 0 },
    {
      name: `${p}-${fn}-throttles`,
      metric: "Throttles",
      dimension: ["FunctionName", `${p}-${fn}`],
      threshold: 0,
    },
    {
      name: `${p}-${fn}-duration-near-timeout`,
      metric: "Duration",
      dimension: ["FunctionName", `${p}-${fn}`],
      threshold: timeout * 1000 * settings.alarms.duration_timeout_ratio,
    },
  ];
}

/** Each expected alarm as CloudWatch holds it: metric, dimension, threshold, and the topic it notifies. */
async function alarmFindings(
  cloudwatch: CloudWatchClient,
  p: string,
  expected: readonly ExpectedAlarm[],
  alarmTopicArn: string,
): Promise<string[]> {
  const alarms: MetricAlarm[] = [];
  let token: string | undefined;
  do {
    const page = await cloudwatch.send(
      new DescribeAlarmsCommand({ AlarmNamePrefix: `${p}-`, NextToken: token }),
    );
    alarms.push(...(page.MetricAlarms ?? []));
    token = page.NextToken;
  } while (token !== undefined);
  const byName = new Map(alarms.map((a) => [a.AlarmName ?? "", a]));
  const f: string[] = [];
  for (const e of expected) {
    const a = byName.get(e.name);
    if (a === undefined) {
      f.push(`alarm ${e.name} on ${e.metric}: missing`);
      continue;
    }
    expectEqual(f, `alarm ${e.name} MetricName`, a.MetricName, e.metric);
    expectEqual(
      f,
      `alarm ${e.name} Dimensions`,
      (a.Dimensions ?? []).map((d) => [d.Name, d.Value]),
      [e.dimension],
    );
    expectEqual(f, `alarm ${e.name} Threshold`, a.Threshold, e.threshold);
    expectEqual(f, `alarm ${e.name} AlarmActions`, a.AlarmActions, [alarmTopicArn]);
  }
  return f;
}

/** Switches deletion protection off on every table, as an operator does before destroying an environment. */
export async function disableDeletionProtection(emulator: string, region: string): Promise<void> {
  const dynamodb = new DynamoDBClient({ region, credentials, endpoint: emulator });
  const { TableNames } = await dynamodb.send(new ListTablesCommand({}));
  for (const TableName of TableNames ?? [])
    await dynamodb.send(new UpdateTableCommand({ TableName, DeletionProtectionEnabled: false }));
  dynamodb.destroy();
}

/** The bootstrap root: the state bucket's guards, and roles that only this repository's workflows assume. */
export async function bootstrapFindings(
  endpoints: Endpoints,
  outputs: Record<string, unknown>,
  options: { region: string; repository: string; environments: readonly string[] },
): Promise<string[]> {
  const config = { region: options.region, credentials, endpoint: endpoints.emulator };
  const s3 = new S3Client({ ...config, forcePathStyle: true });
  const iam = new IAMClient(config);
  const findings: string[] = [];
  const Bucket = String(outputs.state_bucket);

  const versioning = await s3.send(new GetBucketVersioningCommand({ Bucket }));
  expectEqual(findings, `${Bucket} versioning`, versioning.Status, "Enabled");
  const encryption = await s3.send(new GetBucketEncryptionCommand({ Bucket }));
  expectEqual(
    findings,
    `${Bucket} default encryption`,
    encryption.ServerSideEncryptionConfiguration?.Rules?.[0]?.ApplyServerSideEncryptionByDefault
      ?.SSEAlgorithm,
    "AES256",
  );
  const block = await s3.send(new GetPublicAccessBlockCommand({ Bucket }));
  expectEqual(findings, `${Bucket} public access block`, block.PublicAccessBlockConfiguration, {
    BlockPublicAcls: true,
    IgnorePublicAcls: true,
    BlockPublicPolicy: true,
    RestrictPublicBuckets: true,
  });
  const policy = await s3.send(new GetBucketPolicyCommand({ Bucket }));
  if (!(policy.Policy ?? "").includes("aws:SecureTransport"))
    findings.push(`${Bucket} policy: no DenyInsecureTransport statement`);

  const providers = await iam.send(new ListOpenIDConnectProvidersCommand({}));
  expectEqual(findings, "OIDC providers", (providers.OpenIDConnectProviderList ?? []).length, 1);
  // What each role's trust must name (terraform/bootstrap/oidc.tf); npm run iam:check evaluates the
  // trust against the subjects it must refuse.
  const main = "refs/heads/main";
  const apply = `${options.repository}/.github/workflows/apply.yml@${main}`;
  for (const env of options.environments) {
    for (const [kind, subject] of [
      // The subject template includes the run's ref (terraform/bootstrap/oidc.tf; docs/security.md).
      ["deploy", `repo:${options.repository}:environment:${env}:ref:${main}:job_workflow_ref:${apply}`],
      ["plan", `repo:${options.repository}:ref:${main}:ref:${main}:job_workflow_ref:${apply}`],
    ] as const) {
      const role = await iam.send(new GetRoleCommand({ RoleName: `mcp-${env}-${kind}` }));
      const trust = decodeURIComponent(role.Role?.AssumeRolePolicyDocument ?? "");
      if (!trust.includes(subject))
        findings.push(`mcp-${env}-${kind}: trust policy does not limit sub to ${subject}`);
      if (!trust.includes("sts:AssumeRoleWithWebIdentity"))
        findings.push(`mcp-${env}-${kind}: trust policy does not allow sts:AssumeRoleWithWebIdentity`);
      if (kind === "deploy" && trust.includes(":pull_request"))
        findings.push(`mcp-${env}-${kind}: trust policy admits pull requests`);
    }
    // The boundary every function role of the environment carries.
    const boundary = await iam.send(
      new GetPolicyCommand({ PolicyArn: `arn:aws:iam::${ACCOUNT}:policy/mcp-${env}-function-boundary` }),
    );
    if (boundary.Policy?.PolicyName !== `mcp-${env}-function-boundary`)
      findings.push(`mcp-${env}-function-boundary: no such managed policy`);
  }
  s3.destroy();
  iam.destroy();
  return findings;
}
