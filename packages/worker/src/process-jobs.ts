import type { DeadLetterReason, RequestOptions } from "@mcp-pipeline/aws";
import {
  type BatchOutcome,
  deadlineErrorOf,
  deadlineFromContext,
  ItemStatus,
  needsRedelivery,
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
  FailureKind,
  failureCodeOf,
  failureKindOf,
  messageOf,
  sqsRecordIssues,
  type ToolCallJob,
  TransientError,
} from "@mcp-pipeline/contracts";
import { type Claim, type IdempotencyStore, runOnce } from "@mcp-pipeline/idempotency";
import { type CallCache, type ClaimFence, isFinal, type ToolCallStore } from "@mcp-pipeline/tool-calls";
import type { ToolLogger, ToolRegistry } from "@mcp-pipeline/tools/registry";
import type { SQSRecord } from "aws-lambda";
import {
  completedEvent,
  deadLetteredEvent,
  failedEvent,
  type PublishEvents,
  startedEvent,
  terminalEventOf,
} from "./lifecycle.js";
import { backOffRedeliveries, type Redelivery } from "./redelivery.js";
import { attemptOf } from "./redelivery-backoff.js";
import type { PlacedResult } from "./result-store.js";

/** Standard queue: messages independently. FIFO: groups concurrently, each in order (§3). */
export const QueueMode = { Standard: "standard", Fifo: "fifo" } as const;
export type QueueMode = (typeof QueueMode)[keyof typeof QueueMode];

/**
 * Everything the core needs, injected: the handler wires real clients, tests wire emulators. Every call
 * that makes AWS requests takes RequestOptions, whose `signal` the core sets to the invocation's
 * deadline (requestDeadlines in @mcp-pipeline/batch): an implementation must pass it to its requests.
 */
export interface WorkerDeps {
  readonly mode: QueueMode;
  readonly registry: Pick<ToolRegistry, "invoke">;
  readonly toolCalls: Pick<ToolCallStore, "apply" | "prefetch" | "claimCall">;
  readonly idempotency: Pick<IdempotencyStore, "claim" | "complete" | "release" | "completedAmong">;
  /** Keeps a result inline or writes it to S3; resolves once it is durable. */
  readonly placeResult: (callId: string, json: string, options?: RequestOptions) => Promise<PlacedResult>;
  /** Writes lifecycle events to the stream; throws if any could not be written. */
  readonly publish: PublishEvents;
  /** Sends a poison message to the source queue's DLQ; resolves once SQS has it. */
  readonly deadLetter: (
    record: SQSRecord,
    reason: DeadLetterReason,
    options?: RequestOptions,
  ) => Promise<void>;
  readonly logger: ToolLogger;
  readonly concurrency: number;
  /**
   * Nothing new starts once less than this much of the invocation remains; within it, the requests of
   * the jobs in flight are aborted at its half and the bookkeeping after the batch at its quarter
   * (MARGIN_SHARE in @mcp-pipeline/batch, which says why).
   */
  readonly deadlineMarginMs: number;
  /**
   * The source queue's maxReceiveCount and its DLQ: a job whose attempt at that receive count is
   * reported for retry is recorded as dead-lettered, since SQS moves it to the DLQ instead (§2.3).
   */
  readonly deadLetterAfter?: { readonly maxReceiveCount: number; readonly queue: string };
  /**
   * The backoff of the jobs reported for retry: their messages' visibility is set so that they come
   * back sooner than the queue's visibility timeout (§2.3). Absent: they come back after it.
   */
  readonly redelivery?: Redelivery;
  readonly now?: () => number;
}

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

  let succeeded = 0;
  let failedPermanently = 0;
  let duplicates = 0;

  const runJob = async (
    job: ToolCallJob,
    attempt: number,
    claim: Claim,
  ): Promise<"succeeded" | "failed" | "recovered"> => {
    // A worker that stored the outcome but died before publishing it: publish that outcome, run nothing.
    // The batch pre-read may only save work when it shows the call final; "no outcome yet" was read before
    // this claim, and another invocation may have stored an outcome since and released its claim (issue 24,
    // defect 1): claimCall reads the call again, consistently, and takes it for this claim with `started`.
    const begun = now();
    const started = startedEvent(job, attempt, begun);
    const preRead = cache.get(job.callId);
    const taken =
      preRead && isFinal(preRead)
        ? ({ status: "decided", state: preRead } as const)
        : await deps.toolCalls.claimCall(started, claim, cache, requests);
    if (taken.status === "decided") {
      const stored = terminalEventOf(taken.state);
      if (stored) await deps.publish([stored], requests);
      return "recovered";
    }
    // From here on the call's outcome can only be written under this claim (docs/idempotency.md
    // "Fencing outcomes by the claim").
    const fence: ClaimFence = { kind: "held", token: claim.token };
    await deps.publish([started], requests);
    let run: Awaited<ReturnType<WorkerDeps["registry"]["invoke"]>>;
    try {
      run = await deps.registry.invoke(
        {
          tool: job.tool,
          arguments: job.arguments,
          callId: job.callId,
          sessionId: job.sessionId,
          attempt,
          ...(job.deadline !== undefined ? { deadline: job.deadline } : {}),
        },
        // The budget is what is left of the invocation now; the registry counts the wait for a slot
        // of the tool against it, so a queued run cannot outlive the invocation.
        { logger: deps.logger, budgetMs: context.getRemainingTimeInMillis() - deps.deadlineMarginMs, now },
      );
    } catch (error) {
      const permanent = failureKindOf(error) === FailureKind.Permanent;
      const event = failedEvent(job, error, !permanent, attempt, now() - begun, now());
      if (!permanent) {
        // Best effort: the call shows "retrying" to readers; the retry itself does not depend on it.
        await deps
          .publish([event], requests)
          .catch((publishError: unknown) =>
            deps.logger.warn("could not publish a retryable failure", { error: messageOf(publishError) }),
          );
        throw error;
      }
      const applied = await deps.toolCalls.apply(event, cache, undefined, requests, fence);
      await deps.publish([terminalEventOf(applied.state) ?? event], requests);
      deps.logger.warn("tool call failed permanently", {
        callId: job.callId,
        tool: job.tool,
        code: failureCodeOf(error),
        error: messageOf(error),
      });
      return "failed";
    }
    const placed = await deps.placeResult(job.callId, run.json, requests);
    const event = completedEvent(job, { ...placed, json: run.json, durationMs: run.durationMs }, now());
    const applied = await deps.toolCalls.apply(event, cache, placed.output, requests, fence);
    // Publish what the table decided: if an earlier outcome won, that one, not ours.
    await deps.publish([terminalEventOf(applied.state) ?? event], requests);
    return "succeeded";
  };

  /** The claim each record's job ran under, by batch index: a dead-lettered mark is fenced by it. */
  const claims: (Claim | undefined)[] = new Array(records.length);

  const process = deps.mode === QueueMode.Fifo ? processSqsFifoBatch : processSqsBatch;
  const outcome = await process(records, {
    concurrency: deps.concurrency,
    deadline: deadlineFromContext(context, deps.deadlineMarginMs),
    handle: async (record, { index }) => {
      const result = decoded[index] as DecodeResult<ToolCallJob>;
      if (!result.ok) throw result.error;
      const job = result.value;
      let ran: "succeeded" | "failed" | "recovered" = "recovered";
      let once: Awaited<ReturnType<typeof runOnce>>;
      try {
        once = await runOnce(
          deps.idempotency,
          job.callId,
          // The lease ends when this job's requests are cut off: a claim whose answer the abort lost may
          // have been applied, and must not hold the job's redelivery back (docs/idempotency.md).
          deadlines.requestsLeftMs(),
          async (claim) => {
            claims[index] = claim;
            ran = await runJob(job, attemptOf(record), claim);
          },
          completed,
          requests,
        );
      } catch (error) {
        throw deadlineErrorOf(error, deadlines.requests);
      }
      if (once === "duplicate" || ran === "recovered") duplicates += 1;
      else if (ran === "succeeded") succeeded += 1;
      else failedPermanently += 1;
    },
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
    summary: {
      messages: records.length,
      succeeded,
      failedPermanently,
      deadLettered: outcome.counts["set-aside"],
      duplicates,
      retried: outcome.counts.failed + outcome.counts["not-started"],
      notStarted: outcome.counts["not-started"],
      leavingForDlq,
      backedOff,
      durationMs: now() - startedAt,
      deadlineReached: outcome.deadlineReached,
    },
  };
}

/**
 * Jobs reported for retry at their last receive will not come back: SQS moves them to the DLQ once
 * their receive count exceeds maxReceiveCount (§2.3, §9.2 item 5). Their calls are recorded as
 * dead-lettered so that the table does not show `retrying` forever. Best effort: a failed write is
 * logged; the job is in the DLQ either way, and its redrive moves the call on.
 */
async function recordDeadLettered(
  deps: WorkerDeps,
  records: readonly SQSRecord[],
  decoded: readonly DecodeResult<ToolCallJob>[],
  outcome: BatchOutcome<SQSRecord>,
  cache: CallCache,
  claims: readonly (Claim | undefined)[],
  now: () => number,
  options: RequestOptions,
): Promise<number> {
  const limit = deps.deadLetterAfter;
  if (limit === undefined) return 0;
  let recorded = 0;
  for (const [i, result] of outcome.outcomes.entries()) {
    const record = records[i];
    const job = decoded[i];
    if (record === undefined || job === undefined || !job.ok || !needsRedelivery(result)) continue;
    const attempt = attemptOf(record);
    if (attempt < limit.maxReceiveCount) continue;
    const error =
      result.status === ItemStatus.Failed
        ? result.error
        : new NotStartedError(result.status === ItemStatus.NotStarted ? result.reason : "unknown");
    const marker = deadLetteredEvent(job.value, record.messageId, attempt, error, limit.queue, now());
    // Not over a live claim of another invocation: that one is running the job and decides its outcome.
    const fence: ClaimFence = { kind: "not-held-by-another", token: claims[i]?.token, now: now() };
    try {
      await deps.toolCalls.apply(marker, cache, undefined, options, fence);
      recorded += 1;
    } catch (writeError) {
      deps.logger.warn("could not record a dead-lettered call", {
        callId: job.value.callId,
        messageId: record.messageId,
        error: messageOf(writeError),
      });
    }
  }
  return recorded;
}

/** Why a job at its last receive never ran: the deadline, or an earlier failure of its FIFO group. */
class NotStartedError extends TransientError {
  constructor(reason: string) {
    super("not-started", `not started in its last allowed attempt (${reason})`);
    this.name = "NotStartedError";
  }
}
