import { type LazyClient, once } from "@mcp-pipeline/aws";
import type { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import type { s3Client } from "@mcp-pipeline/aws/s3-client";
import type { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { InvalidEventError, type RemainingTime } from "@mcp-pipeline/batch";
import type { BatchReport, Sandbox } from "@mcp-pipeline/batch/consumer-shell";
import { messageIdOf } from "@mcp-pipeline/contracts";
import {
  type FailureStoreDeps,
  type FailureStoreSummary,
  RecoveryRefusedError,
  refusals,
  rereadRange,
  storedQuarantineKeys,
  storeFailureRecords,
} from "@mcp-pipeline/recovery";
import { writeQuarantineRecord } from "@mcp-pipeline/recovery/quarantine";
import type { SQSRecord } from "aws-lambda";
import { type DlqRedriveConfig, type ManualAction, manualActionSchema } from "./config.js";
import { withUnreadableSetAside } from "./unreadable-records.js";

// dlq-redrive's core is packages/recovery's: failure records to the quarantine (storeFailureRecords), and
// the quarantine replay and DLQ redrive it runs when invoked by hand. Here: the wiring and the dispatch.

export interface DlqRedriveClients {
  readonly s3: ReturnType<typeof s3Client>;
  readonly kinesis: ReturnType<typeof kinesisClient>;
  /** Built on first use, with the module that uses it (sqsModule): only a bad message or a manual redrive needs it. */
  readonly sqs: LazyClient<ReturnType<typeof sqsClient>>;
}

/**
 * The SQS half of dlq-redrive (sqs.ts), loaded on first use: an import of the bundle neither parses nor
 * evaluates the SQS client. A failed load fails that message, which SQS redelivers, or that manual action.
 */
export const sqsModule = once(() => import("./sqs.js"));

/**
 * The quarantine replay (replay.ts), loaded on first use: only a manual invocation runs it. A failed load
 * fails that invocation, which changed nothing.
 */
export const replayModule = once(() => import("./replay.js"));

/** What both paths need, built once per sandbox by the consumer shell. */
export interface DlqRedriveDeps {
  readonly config: DlqRedriveConfig;
  readonly clients: DlqRedriveClients;
  readonly failures: FailureStoreDeps;
}

/** The clients are injected; the failure records' path is wired to them and to the configuration. */
export function dlqRedriveDeps(
  config: DlqRedriveConfig,
  clients: DlqRedriveClients,
  sandbox: Sandbox,
): DlqRedriveDeps {
  const { s3, kinesis, sqs } = clients;
  const { logger, functionName } = sandbox;
  const failures: FailureStoreDeps = {
    reread: (range) => rereadRange(kinesis, range),
    quarantine: (record) => writeQuarantineRecord(s3, config.QUARANTINE_BUCKET, record),
    storedKeys: (prefix) => storedQuarantineKeys(s3, config.QUARANTINE_BUCKET, prefix),
    putConcurrency: config.QUARANTINE_PUT_CONCURRENCY,
    deadLetter: async (record, reason) => {
      const { sendToDeadLetterQueue } = await sqsModule();
      await sendToDeadLetterQueue(await sqs(), config.DEAD_LETTER_QUEUE_URL, record, reason);
      logger.error("not an on-failure record: kept in the failure queue's DLQ", {
        messageId: messageIdOf(record),
        reason,
      });
    },
    onLost: (lost) => logger.error("records lost: the stream no longer holds this failed range", { ...lost }),
    functionName,
    concurrency: config.FAILURE_RECORD_CONCURRENCY,
    deadlineMarginMs: config.DEADLINE_MARGIN_MS,
  };
  return { config, clients, failures };
}

/** A batch of the Kinesis failure queue: every failed range re-read from the stream into the quarantine. */
export const storeFailures = (records: readonly SQSRecord[], context: RemainingTime, deps: DlqRedriveDeps) =>
  withUnreadableSetAside(records, deps.failures.deadLetter, (readable) =>
    storeFailureRecords(readable, context, deps.failures),
  );

/** How the shell reports a batch of failure records: what became of the records they name. */
export const dlqRedriveReport: BatchReport<FailureStoreSummary> = {
  failure: "failure record reported for retry",
  summary: "failure records processed",
  metrics: (summary) => ({
    FailureRecords: ["Count", summary.messages],
    RecordsQuarantined: ["Count", summary.stored],
    RecordsAlreadyQuarantined: ["Count", summary.alreadyStored],
    RecordsLost: ["Count", summary.lost],
    DeadLettered: ["Count", summary.deadLettered],
  }),
};

/** A manual invocation's payload (docs/operations.md); anything else is refused, nothing having run. */
export function parseManualAction(event: unknown): ManualAction {
  const parsed = manualActionSchema.safeParse(event);
  if (!parsed.success) {
    throw new InvalidEventError(`expected an SQS event or a manual action: ${parsed.error.message}`);
  }
  return parsed.data;
}

/**
 * Replays quarantined records into the stream, or moves a DLQ's messages back to their queue. Both check
 * first what the real run needs (the stream, where the records came from; the DLQ's source and type) and
 * report the checks; a real run that fails one is refused before it changes anything.
 */
export async function runManualAction(
  action: ManualAction,
  { config, clients }: DlqRedriveDeps,
): Promise<unknown> {
  const { s3, kinesis, sqs } = clients;
  if (action.action === "replay") return (await replayModule()).runReplay(action, config, s3, kinesis);
  const client = await sqs();
  const { moveMessages, planRedrive } = await sqsModule();
  const plan = await planRedrive(client, {
    from: action.dlqUrl,
    to: action.sourceUrl,
    flags: { from: "dlqUrl", to: "sourceUrl" },
  });
  if (!action.dryRun && refusals(plan.checks).length > 0)
    throw new RecoveryRefusedError("redrive", refusals(plan.checks));
  const summary = await moveMessages(client, {
    dlqUrl: plan.from.url,
    sourceUrl: plan.to?.url ?? action.sourceUrl,
    dryRun: action.dryRun,
    ...(action.ratePerSecond ? { ratePerSecond: action.ratePerSecond } : {}),
  });
  return { ...summary, checks: plan.checks };
}
