import type { RequestOptions } from "@mcp-pipeline/aws";
import {
  type BatchOutcome,
  deadlineErrorOf,
  deadlineFromContext,
  type PartialBatchResponse,
  processSqsBatch,
  processSqsFifoBatch,
  type RemainingTime,
  type RequestDeadlines,
  sqsBatchResponse,
  withRequestDeadlines,
} from "@mcp-pipeline/batch";
import {
  type DecodeResult,
  decodeRecord,
  decodeToolCallJob,
  failureCodeOf,
  messageOf,
  sqsRecordIssues,
  type ToolCallJob,
} from "@mcp-pipeline/contracts";
import type { CallCache } from "@mcp-pipeline/tool-calls";
import { type Claim, runOnce } from "@mcp-pipeline/tool-calls/idempotency";
import type { SQSRecord } from "aws-lambda";
import { recordDeadLettered } from "./dead-lettered-calls.js";
import { QueueMode } from "./queue-mode.js";
import { backOffRedeliveries } from "./redelivery.js";
import { attemptOf } from "./redelivery-backoff.js";
import { type BatchScope, JobRun, runClaimedJob } from "./run-job.js";
import type { WorkerDeps } from "./worker-deps.js";

/** What became of each job; the counts add up to the batch size. */
export interface WorkerSummary {
  readonly messages: number;
  /** The tool ran and its result is stored. */
  readonly succeeded: number;
  /** Failed for good (unknown tool, invalid arguments, deadline passed, the tool's permanent error): stored as failed. */
  readonly failedPermanently: number;
  /** Could not be read as a job: sent to the DLQ with the reason. */
  readonly deadLettered: number;
  /** Already completed earlier: not run again. */
  readonly duplicates: number;
  /** Reported for SQS to retry: transient failures and jobs not started before the deadline. */
  readonly retried: number;
  /** Of those, the jobs at their last receive (maxReceiveCount), recorded as dead-lettered in the table. */
  readonly leavingForDlq: number;
  /** Of those, the jobs whose visibility was set to a backoff (the rest return after the visibility timeout). */
  readonly backedOff: number;
  readonly notStarted: number;
  readonly durationMs: number;
  readonly deadlineReached: boolean;
}

export interface WorkerResult {
  readonly response: PartialBatchResponse;
  readonly summary: WorkerSummary;
  readonly outcome: BatchOutcome<SQSRecord>;
}

async function prefetch(
  deps: WorkerDeps,
  jobs: readonly ToolCallJob[],
  requests: RequestOptions,
): Promise<{ completed: ReadonlySet<string>; cache: CallCache }> {
  const callIds = jobs.map((j) => j.callId);
  try {
    const [completed, cache] = await Promise.all([
      deps.idempotency.completedAmong(callIds, requests),
      deps.toolCalls.prefetch(callIds, requests),
    ]);
    return { completed, cache };
  } catch (error) {
    // The pre-read only saves requests; without it every job reads for itself.
    deps.logger.warn("batch pre-read failed; reading per job", { error: messageOf(error) });
    return { completed: new Set(), cache: new Map() };
  }
}

/**
 * The workers' core. For each job: skip it if its call already completed; claim it (two concurrent
 * deliveries cannot both run the tool); take the call for the claim (read it again, publish its outcome
 * instead if it has one, else register the claim on it with `started`); publish `started`; run the tool
 * within its timeout and the invocation's remaining time; store the result (the table, fenced by the
 * claim, or S3 when large) and then publish `completed`. Permanent failures are stored as a failed result
 * and acknowledged, poison messages go to the DLQ, transient failures are reported by messageId for SQS to
 * retry (§2.3).
 *
 * Every AWS request is bounded by the invocation's deadline (requestDeadlines): a request still open when
 * the jobs' share of the margin ends is aborted and fails its job alone, which is reported for retry
 * (§2.3; §3 for the rest of its FIFO group), instead of running the invocation into its timeout, which
 * would fail the whole batch and destroy the sandbox.
 */
export async function processToolCallJobs(
  records: readonly SQSRecord[],
  context: RemainingTime,
  deps: WorkerDeps,
): Promise<WorkerResult> {
  return withRequestDeadlines(context, deps.deadlineMarginMs, (deadlines) =>
    processWithin(records, context, deps, deadlines),
  );
}

async function processWithin(
  records: readonly SQSRecord[],
  context: RemainingTime,
  deps: WorkerDeps,
  deadlines: RequestDeadlines,
): Promise<WorkerResult> {
  const now = deps.now ?? Date.now;
  const startedAt = now();
  const requests: RequestOptions = { signal: deadlines.requests };
  // A record that cannot be read (no `attributes`, a body that is not text...) is its own permanent
  // failure, dead-lettered like a poison body: never a throw here, which would fail its batch-mates (issue 24).
  const decoded: DecodeResult<ToolCallJob>[] = records.map((r) =>
    decodeRecord(r, sqsRecordIssues, (record) => decodeToolCallJob(record.body)),
  );
  const { completed, cache } = await prefetch(
    deps,
    decoded.flatMap((d) => (d.ok ? [d.value] : [])),
    requests,
  );

  const tally: JobTally = { succeeded: 0, failedPermanently: 0, duplicates: 0 };
  const scope: BatchScope = { deps, context, cache, requests, now };

  /** The claim each record's job ran under, by batch index: a dead-lettered mark is fenced by it. */
  const claims: (Claim | undefined)[] = new Array(records.length);

  const process = deps.mode === QueueMode.Fifo ? processSqsFifoBatch : processSqsBatch;
  const outcome = await process(records, {
    concurrency: deps.concurrency,
    deadline: deadlineFromContext(context, deps.deadlineMarginMs),
    handle: jobHandler(decoded, claims, completed, scope, deadlines, tally),
    // Permanent errors that escape `handle`: in practice, bodies that cannot be read as a job.
    setAside: (record, error) =>
      deps.deadLetter(record, { code: failureCodeOf(error), message: messageOf(error) }, requests),
  });

  // The bookkeeping after the batch has the next share of the margin (requestDeadlines' `settle`).
  const leavingForDlq = await recordDeadLettered(deps, records, decoded, outcome, cache, claims, now, {
    signal: deadlines.settle,
  });
  // Last: a job must not show again while this invocation still writes for it.
  const backedOff = deps.redelivery
    ? await backOffRedeliveries(records, outcome, deps.mode, deps.redelivery, deadlines.settle, deps.logger)
    : 0;

  return {
    response: sqsBatchResponse(outcome),
    outcome,
    summary: summaryOf(records, outcome, tally, leavingForDlq, backedOff, now() - startedAt),
  };
}

/** What became of the jobs the handler ran, counted as they end. */
interface JobTally {
  succeeded: number;
  failedPermanently: number;
  duplicates: number;
}

/** Runs one record's job at most once (its call's claim), and counts what became of it. */
function jobHandler(
  decoded: readonly DecodeResult<ToolCallJob>[],
  claims: (Claim | undefined)[],
  completed: ReadonlySet<string>,
  scope: BatchScope,
  deadlines: RequestDeadlines,
  tally: JobTally,
) {
  return async (record: SQSRecord, { index }: { readonly index: number }): Promise<void> => {
    const result = decoded[index] as DecodeResult<ToolCallJob>;
    if (!result.ok) throw result.error;
    const job = result.value;
    let ran: JobRun = JobRun.Recovered;
    let once: Awaited<ReturnType<typeof runOnce>>;
    try {
      once = await runOnce(
        scope.deps.idempotency,
        job.callId,
        // The lease ends when this job's requests are cut off: a claim whose answer the abort lost may
        // have been applied, and must not hold the job's redelivery back (docs/idempotency.md).
        deadlines.requestsLeftMs(),
        async (claim) => {
          claims[index] = claim;
          ran = await runClaimedJob(job, attemptOf(record), claim, scope);
        },
        completed,
        scope.requests,
      );
    } catch (error) {
      throw deadlineErrorOf(error, deadlines.requests);
    }
    if (once === "duplicate" || ran === JobRun.Recovered) tally.duplicates += 1;
    else if (ran === JobRun.Succeeded) tally.succeeded += 1;
    else tally.failedPermanently += 1;
  };
}

function summaryOf(
  records: readonly SQSRecord[],
  outcome: BatchOutcome<SQSRecord>,
  tally: JobTally,
  leavingForDlq: number,
  backedOff: number,
  durationMs: number,
): WorkerSummary {
  return {
    messages: records.length,
    succeeded: tally.succeeded,
    failedPermanently: tally.failedPermanently,
    deadLettered: outcome.counts["set-aside"],
    duplicates: tally.duplicates,
    retried: outcome.counts.failed + outcome.counts["not-started"],
    notStarted: outcome.counts["not-started"],
    leavingForDlq,
    backedOff,
    durationMs,
    deadlineReached: outcome.deadlineReached,
  };
}
