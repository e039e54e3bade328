/**
 * Which resources each of the repository's modules acts on when a function runs it: the one thing the
 * permission check cannot read from a bundle. The bundle says which operations a module sends
 * (sdk-calls.ts); this says on what, in terms of what the deployed function is given (its environment
 * variables, its event source mapping), so that every target resolves to an ARN of the applied state.
 *
 * A module in a function's bundle that sends an operation, and has no entry here, is a finding: a new call
 * cannot go unchecked. An entry the bundle no longer needs is a finding too (code-targets stale).
 */

/** A resource a module acts on, as the deployed function knows it. */
export type Target =
  /** A DynamoDB table named by an environment variable. */
  | { readonly kind: "table"; readonly env: string }
  /** A Kinesis stream named by an environment variable. */
  | { readonly kind: "stream"; readonly env: string }
  /** An SQS queue whose URL is an environment variable. */
  | { readonly kind: "queue"; readonly env: string }
  /** The queue the function's own SQS event source mapping reads (messages' eventSourceARN). */
  | { readonly kind: "source-queue" }
  /** A bucket named by an environment variable, and the objects under `prefix` (ListBucket on the bucket). */
  | { readonly kind: "objects"; readonly env: string; readonly prefix: string }
  /**
   * dlq-redrive's manual `redrive-dlq` action: the DLQs of these functions' source queues (`dlq`), or the
   * source queues themselves (`source`), as docs/operations.md has operators use it.
   */
  | { readonly kind: "redrive"; readonly side: "dlq" | "source"; readonly consumers: readonly string[] };

export interface Use {
  /** The module, repository-relative. */
  readonly module: string;
  /** Only these operations of the module (`service:Operation`); all it sends when absent. */
  readonly operations?: readonly string[];
  readonly on: readonly Target[];
}

const TOOL_CALLS: Target = { kind: "table", env: "TOOL_CALLS_TABLE" };
const DEDUPE: Target = { kind: "table", env: "DEDUPE_TABLE" };
const QUARANTINE: Target = { kind: "objects", env: "QUARANTINE_BUCKET", prefix: "kinesis/" };
/** The replay journals, in the quarantine bucket (packages/recovery/src/replay-journal.ts). */
const REPLAY_JOURNALS: Target = { kind: "objects", env: "QUARANTINE_BUCKET", prefix: "replays/" };
const OWN_DLQ: Target = { kind: "queue", env: "DEAD_LETTER_QUEUE_URL" };
/** dlq-redrive's manual redrive-dlq: the workers' DLQs, and the queues they go back to. */
const WORKER_DLQS: Target = { kind: "redrive", side: "dlq", consumers: ["tool-worker", "fifo-worker"] };
const WORKER_SOURCES: Target = { kind: "redrive", side: "source", consumers: ["tool-worker", "fifo-worker"] };

/** The workers (tool-worker, fifo-worker): one core, packages/worker. */
const WORKER: readonly Use[] = [
  // The batch pre-read: the calls (tool-calls) and the completed claims (dedupe).
  { module: "packages/aws/src/batch-get.ts", on: [TOOL_CALLS, DEDUPE] },
  { module: "packages/tool-calls/src/store.ts", on: [TOOL_CALLS] },
  { module: "packages/tool-calls/src/idempotency/store.ts", on: [DEDUPE] },
  { module: "packages/aws/src/put-request.ts", on: [{ kind: "stream", env: "EVENTS_STREAM_NAME" }] },
  {
    module: "packages/worker/src/result-object.ts",
    on: [{ kind: "objects", env: "RESULTS_BUCKET", prefix: "results/" }],
  },
  { module: "packages/aws/src/sqs-client.ts", on: [OWN_DLQ] },
  // The retry backoff sets a reported message's visibility on the queue it came from (§2.6).
  { module: "packages/worker/src/sqs-visibility.ts", on: [{ kind: "source-queue" }] },
];

/** Every function's modules and what they act on, by the function's name in dist/ and resource-names.json. */
export const CODE_TARGETS: Readonly<Record<string, readonly Use[]>> = {
  processor: [
    { module: "packages/aws/src/batch-get.ts", on: [TOOL_CALLS] },
    { module: "packages/tool-calls/src/store.ts", on: [TOOL_CALLS] },
    { module: "packages/recovery/src/quarantine/store.ts", on: [QUARANTINE] },
  ],
  "tool-worker": WORKER,
  "fifo-worker": WORKER,
  "dlq-redrive": [
    // Failure records: the failed range re-read from the stream, quarantined.
    { module: "packages/recovery/src/reread.ts", on: [{ kind: "stream", env: "STREAM_NAME" }] },
    { module: "packages/recovery/src/quarantine/store.ts", on: [QUARANTINE] },
    // Its getObjectBytes reads the replay journals too (replay-journal.ts readReplayJournals).
    {
      module: "packages/recovery/src/quarantine/store.ts",
      operations: ["s3:GetObject"],
      on: [REPLAY_JOURNALS],
    },
    // A message that is no failure record goes to the failure queue's DLQ.
    { module: "packages/aws/src/sqs-client.ts", on: [OWN_DLQ] },
    // The manual replay: list and read the quarantine, put records back, tag what was replayed.
    { module: "packages/recovery/src/quarantine-ops.ts", on: [QUARANTINE] },
    // Its journals: listed with the records (the listing is the bucket's) and one written per chunk; read
    // through quarantine/store.ts's getObjectBytes (above).
    { module: "packages/recovery/src/replay-journal.ts", on: [REPLAY_JOURNALS] },
    { module: "packages/aws/src/put-request.ts", on: [{ kind: "stream", env: "STREAM_NAME" }] },
    // Before a replay: the stream the records go back to exists and is active.
    { module: "packages/recovery/src/replay-checks.ts", on: [{ kind: "stream", env: "STREAM_NAME" }] },
    // The manual redrive-dlq: the workers' DLQs are read, counted (received, then released with
    // ChangeMessageVisibility, peek-messages.ts) and moved; their source queues are sent to.
    {
      module: "packages/recovery/src/move-messages.ts",
      operations: [
        "sqs:GetQueueAttributes",
        "sqs:ReceiveMessage",
        "sqs:DeleteMessageBatch",
        "sqs:StartMessageMoveTask",
        "sqs:ListMessageMoveTasks",
      ],
      on: [WORKER_DLQS],
    },
    {
      module: "packages/recovery/src/move-messages.ts",
      operations: ["sqs:GetQueueAttributes", "sqs:SendMessageBatch"],
      on: [WORKER_SOURCES],
    },
    {
      module: "packages/recovery/src/peek-messages.ts",
      on: [WORKER_DLQS],
    },
    // The redrive's checks (redrive-plan.ts): both queues are looked up (GetQueueUrl for an ARN) and read;
    // the DLQ's sources are listed, and whether a move task runs on it.
    {
      module: "packages/recovery/src/redrive-plan.ts",
      operations: [
        "sqs:GetQueueUrl",
        "sqs:GetQueueAttributes",
        "sqs:ListDeadLetterSourceQueues",
        "sqs:ListMessageMoveTasks",
      ],
      on: [WORKER_DLQS],
    },
    {
      module: "packages/recovery/src/redrive-plan.ts",
      operations: ["sqs:GetQueueUrl", "sqs:GetQueueAttributes"],
      on: [WORKER_SOURCES],
    },
  ],
};

/** The service a target's resources belong to. */
export function serviceOf(target: Target): string {
  switch (target.kind) {
    case "table":
      return "dynamodb";
    case "stream":
      return "kinesis";
    case "objects":
      return "s3";
    default:
      return "sqs";
  }
}
