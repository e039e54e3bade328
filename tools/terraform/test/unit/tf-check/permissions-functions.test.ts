import { describe, expect, it } from "vitest";
import { functionPermissionFindings } from "../../../src/tf-check/permissions/function-permissions.ts";
import type { PolicyStatement } from "../../../src/tf-check/permissions/policy.ts";
import type { BundleCalls } from "../../../src/tf-check/permissions/sdk-calls.ts";
import { DeployedState, type StateResource } from "../../../src/tf-check/permissions/terraform-state.ts";

// The permission check on a small applied state shaped as `terraform show -json` prints it (one account,
// prefix mcp-t), with bundles' calls given: each rule is shown passing on the policies the pipeline module
// renders, and failing when the policy or the code is broken on purpose.

const A = "arn:aws:sqs:eu-west-1:123456789012";
const K = "arn:aws:kinesis:eu-west-1:123456789012";
const url = (name: string) => `http://127.0.0.1:1/123456789012/${name}`;
const resource = (type: string, address: string, values: Record<string, unknown>): StateResource => ({
  address,
  mode: "managed",
  type,
  values,
});
const queue = (name: string) =>
  resource("aws_sqs_queue", name, { arn: `${A}:${name}`, url: url(name), name });
const redrive = (source: string, dlq: string) =>
  resource("aws_sqs_queue_redrive_policy", `${source}-redrive`, {
    queue_url: url(source),
    redrive_policy: JSON.stringify({ deadLetterTargetArn: `${A}:${dlq}`, maxReceiveCount: 5 }),
  });
const fn = (name: string, environment: Record<string, string>) =>
  resource("aws_lambda_function", name, {
    function_name: `mcp-t-${name}`,
    arn: `arn:aws:lambda:eu-west-1:123456789012:function:mcp-t-${name}`,
    role: `arn:aws:iam::123456789012:role/mcp-t-${name}`,
    environment: [{ variables: environment }],
    logging_config: [{ log_group: `/aws/lambda/mcp-t-${name}` }],
    tracing_config: [{ mode: "Active" }],
  });
const logGroup = (name: string) =>
  resource("aws_cloudwatch_log_group", `${name}-logs`, {
    name: `/aws/lambda/mcp-t-${name}`,
    arn: `arn:aws:logs:eu-west-1:123456789012:log-group:/aws/lambda/mcp-t-${name}`,
  });
const mapping = (name: string, source: string, onFailure?: string) =>
  resource("aws_lambda_event_source_mapping", `${name}-esm`, {
    function_name: `arn:aws:lambda:eu-west-1:123456789012:function:mcp-t-${name}`,
    event_source_arn: source,
    destination_config: onFailure ? [{ on_failure: [{ destination_arn: onFailure }] }] : [],
  });
const policy = (name: string, statements: readonly PolicyStatement[]) =>
  resource("aws_iam_role_policy", `${name}-policy`, {
    role: `mcp-t-${name}`,
    name: `mcp-t-${name}-least-privilege`,
    policy: JSON.stringify({ Version: "2012-10-17", Statement: statements }),
  });
const allow = (Sid: string, Action: string[], Resource: string | string[]): PolicyStatement => ({
  Sid,
  Effect: "Allow",
  Action,
  Resource,
});
const own = (name: string): PolicyStatement[] => [
  allow(
    "OwnLogs",
    ["logs:CreateLogStream", "logs:PutLogEvents"],
    `arn:aws:logs:eu-west-1:123456789012:log-group:/aws/lambda/mcp-t-${name}:*`,
  ),
  allow("Tracing", ["xray:PutTraceSegments", "xray:PutTelemetryRecords"], "*"),
];

const QUARANTINE = "arn:aws:s3:::mcp-t-quarantine-123456789012";
const WORKER_DLQS = [`${A}:mcp-t-tool-jobs-dlq`, `${A}:mcp-t-session-jobs-dlq.fifo`];

/** dlq-redrive's statements as terraform/modules/pipeline renders them. */
const dlqRedriveStatements: PolicyStatement[] = [
  ...own("dlq-redrive"),
  allow(
    "ConsumeFailureRecords",
    ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"],
    `${A}:mcp-t-stream-failures`,
  ),
  allow("KeepMalformedFailureRecords", ["sqs:SendMessage"], `${A}:mcp-t-stream-failures-dlq`),
  allow(
    "RereadAndReplay",
    ["kinesis:GetShardIterator", "kinesis:GetRecords", "kinesis:PutRecords", "kinesis:DescribeStreamSummary"],
    `${K}:stream/mcp-t-events`,
  ),
  allow(
    "Quarantine",
    ["s3:PutObject", "s3:GetObject", "s3:GetObjectTagging", "s3:PutObjectTagging"],
    `${QUARANTINE}/kinesis/*`,
  ),
  allow("ReplayJournals", ["s3:PutObject", "s3:GetObject"], `${QUARANTINE}/replays/*`),
  allow("ListQuarantine", ["s3:ListBucket"], QUARANTINE),
  allow(
    "RedriveDeadLetterQueues",
    [
      "sqs:StartMessageMoveTask",
      "sqs:ListMessageMoveTasks",
      "sqs:ReceiveMessage",
      "sqs:ChangeMessageVisibility",
      "sqs:DeleteMessage",
      "sqs:GetQueueAttributes",
      "sqs:GetQueueUrl",
      "sqs:ListDeadLetterSourceQueues",
    ],
    WORKER_DLQS,
  ),
  allow(
    "RedriveTargets",
    ["sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"],
    [`${A}:mcp-t-tool-jobs`, `${A}:mcp-t-session-jobs.fifo`],
  ),
];

/** The calls dlq-redrive's bundle makes (as sdk-calls.ts reads them from the metafile). */
const dlqRedriveCalls: BundleCalls = {
  calls: [
    { operation: "kinesis:DescribeStreamSummary", modules: ["packages/recovery/src/replay-checks.ts"] },
    { operation: "kinesis:GetRecords", modules: ["packages/recovery/src/reread.ts"] },
    { operation: "kinesis:GetShardIterator", modules: ["packages/recovery/src/reread.ts"] },
    { operation: "kinesis:PutRecords", modules: ["packages/aws/src/put-request.ts"] },
    {
      operation: "s3:GetObject",
      modules: ["packages/recovery/src/quarantine/store.ts", "packages/recovery/src/replay-journal.ts"],
    },
    { operation: "s3:GetObjectTagging", modules: ["packages/recovery/src/quarantine-ops.ts"] },
    {
      operation: "s3:ListObjectsV2",
      modules: ["packages/recovery/src/quarantine-ops.ts", "packages/recovery/src/replay-journal.ts"],
    },
    {
      operation: "s3:PutObject",
      modules: ["packages/recovery/src/quarantine/store.ts", "packages/recovery/src/replay-journal.ts"],
    },
    { operation: "s3:PutObjectTagging", modules: ["packages/recovery/src/quarantine-ops.ts"] },
    { operation: "sqs:ChangeMessageVisibilityBatch", modules: ["packages/recovery/src/peek-messages.ts"] },
    { operation: "sqs:DeleteMessageBatch", modules: ["packages/recovery/src/move-messages.ts"] },
    {
      operation: "sqs:GetQueueAttributes",
      modules: ["packages/recovery/src/move-messages.ts", "packages/recovery/src/redrive-plan.ts"],
    },
    { operation: "sqs:GetQueueUrl", modules: ["packages/recovery/src/redrive-plan.ts"] },
    { operation: "sqs:ListDeadLetterSourceQueues", modules: ["packages/recovery/src/redrive-plan.ts"] },
    {
      operation: "sqs:ListMessageMoveTasks",
      modules: ["packages/recovery/src/move-messages.ts", "packages/recovery/src/redrive-plan.ts"],
    },
    {
      operation: "sqs:ReceiveMessage",
      modules: ["packages/recovery/src/move-messages.ts", "packages/recovery/src/peek-messages.ts"],
    },
    { operation: "sqs:SendMessage", modules: ["packages/aws/src/sqs-client.ts"] },
    { operation: "sqs:SendMessageBatch", modules: ["packages/recovery/src/move-messages.ts"] },
    { operation: "sqs:StartMessageMoveTask", modules: ["packages/recovery/src/move-messages.ts"] },
  ],
  unattributed: [],
};

function environmentState(options: {
  dlqRedrive?: PolicyStatement[];
  processor?: PolicyStatement[];
  enhancedFanOut?: boolean;
}): DeployedState {
  const consumer = `${K}:stream/mcp-t-events/consumer/mcp-t-processor:1700000000`;
  return new DeployedState({
    values: {
      root_module: {
        resources: [
          ...[
            "tool-jobs",
            "tool-jobs-dlq",
            "session-jobs.fifo",
            "session-jobs-dlq.fifo",
            "stream-failures",
            "stream-failures-dlq",
          ].map((q) => queue(`mcp-t-${q}`)),
          redrive("mcp-t-tool-jobs", "mcp-t-tool-jobs-dlq"),
          redrive("mcp-t-session-jobs.fifo", "mcp-t-session-jobs-dlq.fifo"),
          resource("aws_kinesis_stream", "stream", { name: "mcp-t-events", arn: `${K}:stream/mcp-t-events` }),
          resource("aws_dynamodb_table", "calls", {
            name: "mcp-t-tool-calls",
            arn: "arn:aws:dynamodb:eu-west-1:123456789012:table/mcp-t-tool-calls",
          }),
          resource("aws_s3_bucket", "quarantine", {
            bucket: "mcp-t-quarantine-123456789012",
            arn: QUARANTINE,
          }),
          fn("dlq-redrive", {
            QUARANTINE_BUCKET: "mcp-t-quarantine-123456789012",
            STREAM_NAME: "mcp-t-events",
            DEAD_LETTER_QUEUE_URL: url("mcp-t-stream-failures-dlq"),
          }),
          logGroup("dlq-redrive"),
          mapping("dlq-redrive", `${A}:mcp-t-stream-failures`),
          policy("dlq-redrive", options.dlqRedrive ?? dlqRedriveStatements),
          fn("tool-worker", {}),
          mapping("tool-worker", `${A}:mcp-t-tool-jobs`),
          fn("fifo-worker", {}),
          mapping("fifo-worker", `${A}:mcp-t-session-jobs.fifo`),
          fn("processor", {
            TOOL_CALLS_TABLE: "mcp-t-tool-calls",
            QUARANTINE_BUCKET: "mcp-t-quarantine-123456789012",
          }),
          logGroup("processor"),
          mapping(
            "processor",
            options.enhancedFanOut ? consumer : `${K}:stream/mcp-t-events`,
            `${A}:mcp-t-stream-failures`,
          ),
          policy("processor", options.processor ?? []),
        ],
      },
    },
  });
}

function check(name: string, state: DeployedState, calls: BundleCalls) {
  const deployed = new Map(state.functions().map((f) => [f.name, f]));
  const fn = deployed.get(`mcp-t-${name}`);
  if (fn === undefined) throw new Error(`no ${name}`);
  return functionPermissionFindings(name, fn, calls, state, (key) => deployed.get(`mcp-t-${key}`)).map(
    (f) => `${f.kind}: ${f.message}`,
  );
}

describe("dlq-redrive's role against its bundle's calls", () => {
  it("the pipeline module's statements allow every call and nothing else", () => {
    expect(check("dlq-redrive", environmentState({}), dlqRedriveCalls)).toEqual([]);
  });

  it("finds the missing ChangeMessageVisibility of the dry-run redrive on both workers' DLQs (issue 25 item 9)", () => {
    const broken = dlqRedriveStatements.map((s) =>
      s.Sid === "RedriveDeadLetterQueues"
        ? { ...s, Action: (s.Action as string[]).filter((a) => a !== "sqs:ChangeMessageVisibility") }
        : s,
    );
    expect(check("dlq-redrive", environmentState({ dlqRedrive: broken }), dlqRedriveCalls)).toEqual(
      WORKER_DLQS.map(
        (q) =>
          `missing: sqs:ChangeMessageVisibility on ${q} is not allowed (sqs:ChangeMessageVisibilityBatch from packages/recovery/src/peek-messages.ts)`,
      ),
    );
  });

  it("finds ChangeMessageVisibility granted on the wrong queue: missing on the DLQs, unused on its own", () => {
    const broken = dlqRedriveStatements.map((s) =>
      s.Sid === "ConsumeFailureRecords"
        ? { ...s, Action: [...(s.Action as string[]), "sqs:ChangeMessageVisibility"] }
        : s.Sid === "RedriveDeadLetterQueues"
          ? { ...s, Action: (s.Action as string[]).filter((a) => a !== "sqs:ChangeMessageVisibility") }
          : s,
    );
    const findings = check("dlq-redrive", environmentState({ dlqRedrive: broken }), dlqRedriveCalls);
    expect(findings.filter((f) => f.startsWith("missing:"))).toHaveLength(2);
    expect(findings).toContain(
      `unused: ConsumeFailureRecords allows sqs:ChangeMessageVisibility on ${A}:mcp-t-stream-failures, which nothing calls there`,
    );
  });

  it("reports a grant that nothing calls (least privilege)", () => {
    const wider = dlqRedriveStatements.map((s) =>
      s.Sid === "RereadAndReplay" ? { ...s, Action: [...(s.Action as string[]), "kinesis:ListShards"] } : s,
    );
    expect(check("dlq-redrive", environmentState({ dlqRedrive: wider }), dlqRedriveCalls)).toEqual([
      `unused: RereadAndReplay allows kinesis:ListShards on ${K}:stream/mcp-t-events, which nothing calls there`,
    ]);
  });

  it("a new call in the bundle is checked: a DeleteObject from the quarantine module is denied", () => {
    const calls = {
      ...dlqRedriveCalls,
      calls: [
        ...dlqRedriveCalls.calls,
        { operation: "s3:DeleteObject", modules: ["packages/recovery/src/quarantine-ops.ts"] },
      ],
    };
    expect(check("dlq-redrive", environmentState({}), calls)).toEqual([
      `missing: s3:DeleteObject on ${QUARANTINE}/kinesis/example-key.json is not allowed (s3:DeleteObject from packages/recovery/src/quarantine-ops.ts)`,
    ]);
  });

  it.each([
    [
      "an operation without an IAM mapping",
      { operation: "sqs:PurgeQueue", modules: ["packages/recovery/src/move-messages.ts"] },
      "unchecked: sqs:PurgeQueue (sent by packages/recovery/src/move-messages.ts) has no IAM mapping in iam-actions.ts",
    ],
    [
      "a module code-targets.ts does not know",
      { operation: "sqs:SendMessage", modules: ["packages/new/src/sender.ts"] },
      "unchecked: packages/new/src/sender.ts sends sqs:SendMessage, and code-targets.ts does not say on what",
    ],
  ])("cannot pass what it cannot judge: %s", (_label, call, finding) => {
    const calls = { ...dlqRedriveCalls, calls: [...dlqRedriveCalls.calls, call] };
    expect(check("dlq-redrive", environmentState({}), calls)).toContain(finding);
  });

  it("an operation no module constructs is a finding, unless the SDK never sends it (NEVER_SENT)", () => {
    const calls = { ...dlqRedriveCalls, unattributed: ["s3:DeleteObjects"] };
    expect(check("dlq-redrive", environmentState({}), calls)).toEqual([
      "unchecked: its bundle holds s3:DeleteObjects, which none of its modules constructs and NEVER_SENT does not list",
    ]);
  });

  it("a code target the bundle no longer needs is stale", () => {
    const calls = {
      ...dlqRedriveCalls,
      calls: dlqRedriveCalls.calls.filter((c) => !c.modules.includes("packages/recovery/src/reread.ts")),
    };
    const findings = check("dlq-redrive", environmentState({}), calls);
    expect(findings).toContain(
      "unchecked: code-targets.ts lists packages/recovery/src/reread.ts (every operation) for dlq-redrive, but its bundle sends none of it: stale",
    );
  });
});

describe("the processor's role against Lambda's Kinesis mapping (§11)", () => {
  const processorCalls: BundleCalls = {
    calls: [
      { operation: "dynamodb:BatchGetItem", modules: ["packages/aws/src/batch-get.ts"] },
      { operation: "dynamodb:GetItem", modules: ["packages/tool-calls/src/store.ts"] },
      { operation: "dynamodb:PutItem", modules: ["packages/tool-calls/src/store.ts"] },
      { operation: "s3:PutObject", modules: ["packages/recovery/src/quarantine/store.ts"] },
    ],
    unattributed: [],
  };
  const stream = `${K}:stream/mcp-t-events`;
  const consumer = `${K}:stream/mcp-t-events/consumer/mcp-t-processor:1700000000`;
  const read = [
    "kinesis:DescribeStream",
    "kinesis:DescribeStreamSummary",
    "kinesis:GetRecords",
    "kinesis:GetShardIterator",
    "kinesis:ListShards",
    "kinesis:SubscribeToShard",
  ];
  const common = [
    ...own("processor"),
    allow("SendOnFailureRecords", ["sqs:SendMessage"], `${A}:mcp-t-stream-failures`),
    allow(
      "ToolCalls",
      ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem"],
      "arn:aws:dynamodb:eu-west-1:123456789012:table/mcp-t-tool-calls",
    ),
    allow("WriteQuarantine", ["s3:PutObject"], `${QUARANTINE}/kinesis/*`),
  ];

  it("with enhanced fan-out, the stream and the consumer as the pipeline module grants them", () => {
    const statements = [
      ...common,
      allow("ReadStream", read, stream),
      allow("ReadThroughConsumer", ["kinesis:DescribeStreamConsumer", "kinesis:SubscribeToShard"], consumer),
    ];
    expect(
      check("processor", environmentState({ processor: statements, enhancedFanOut: true }), processorCalls),
    ).toEqual([]);
  });

  it("finds the missing DescribeStreamConsumer of the old statement, and what it granted on the consumer for nothing", () => {
    const old = [...common, allow("ReadStream", read, [stream, consumer])];
    expect(
      check("processor", environmentState({ processor: old, enhancedFanOut: true }), processorCalls),
    ).toEqual([
      `missing: kinesis:DescribeStreamConsumer on ${consumer} is not allowed (Lambda's mapping reads through its enhanced fan-out consumer (§11))`,
      ...read
        .filter((a) => a !== "kinesis:SubscribeToShard")
        .map((a) => `unused: ReadStream allows ${a} on ${consumer}, which nothing calls there`),
    ]);
  });
});
