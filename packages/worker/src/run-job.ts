import type { RequestOptions } from "@mcp-pipeline/aws";
import type { RemainingTime } from "@mcp-pipeline/batch";
import {
  FailureKind,
  failureCodeOf,
  failureKindOf,
  messageOf,
  type ToolCallJob,
  type ToolCallStarted,
} from "@mcp-pipeline/contracts";
import { type CallCache, type ClaimFence, isFinal } from "@mcp-pipeline/tool-calls";
import type { Claim } from "@mcp-pipeline/tool-calls/idempotency";
import { completedEvent, failedEvent, startedEvent, terminalEventOf } from "./lifecycle.js";
import type { WorkerDeps } from "./worker-deps.js";

/** What one job came to under its claim. */
export const JobRun = {
  /** The tool ran and its result is stored. */
  Succeeded: "succeeded",
  /** The tool failed for good; that failure is stored. */
  Failed: "failed",
  /** The call already had an outcome (stored by an earlier run): it was published again, nothing ran. */
  Recovered: "recovered",
} as const;
export type JobRun = (typeof JobRun)[keyof typeof JobRun];

/** What a job's run shares with the rest of its batch. */
export interface BatchScope {
  readonly deps: WorkerDeps;
  readonly context: RemainingTime;
  /** The calls as the batch pre-read them, kept up to date by the batch's own writes. */
  readonly cache: CallCache;
  /** Bounded by the jobs' share of the invocation's deadline. */
  readonly requests: RequestOptions;
  readonly now: () => number;
}

/**
 * One job, once its claim is held: take the call for the claim (or publish the outcome it already has),
 * publish `started`, run the tool within the invocation's remaining time, store its result or its
 * permanent failure fenced by the claim, and publish the outcome the table kept. A transient failure is
 * thrown, for the batch to report the message for retry (§2.3).
 */
export async function runClaimedJob(
  job: ToolCallJob,
  attempt: number,
  claim: Claim,
  scope: BatchScope,
): Promise<JobRun> {
  const { deps, cache, requests, now } = scope;
  const begun = now();
  const started = startedEvent(job, attempt, begun);
  if (await alreadyDecided(job, started, claim, scope)) return JobRun.Recovered;
  // From here on the call's outcome can only be written under this claim (docs/idempotency.md
  // "Fencing outcomes by the claim").
  const fence: ClaimFence = { kind: "held", token: claim.token };
  await deps.publish([started], requests);
  let run: ToolRun;
  try {
    run = await invokeTool(job, attempt, scope);
  } catch (error) {
    return await settleFailure(job, error, attempt, begun, fence, scope);
  }
  const placed = await deps.placeResult(job.callId, run.json, requests);
  const event = completedEvent(job, { ...placed, json: run.json, durationMs: run.durationMs }, now());
  const applied = await deps.toolCalls.apply(event, cache, placed.output, requests, fence);
  // Publish what the table decided: if an earlier outcome won, that one, not ours.
  await deps.publish([terminalEventOf(applied.state) ?? event], requests);
  return JobRun.Succeeded;
}

type ToolRun = Awaited<ReturnType<WorkerDeps["registry"]["invoke"]>>;

/**
 * Whether the call was decided already, its outcome published again (true), or is now taken for this
 * claim with `started` (false).
 *
 * A worker that stored the outcome but died before publishing it: publish that outcome, run nothing.
 * The batch pre-read may only save work when it shows the call final; "no outcome yet" was read before
 * this claim, and another invocation may have stored an outcome since and released its claim (issue 24,
 * defect 1): claimCall reads the call again, consistently, and takes it for this claim with `started`.
 */
async function alreadyDecided(
  job: ToolCallJob,
  started: ToolCallStarted,
  claim: Claim,
  scope: BatchScope,
): Promise<boolean> {
  const { deps, cache, requests } = scope;
  const preRead = cache.get(job.callId);
  const taken =
    preRead && isFinal(preRead)
      ? ({ status: "decided", state: preRead } as const)
      : await deps.toolCalls.claimCall(started, claim, cache, requests);
  if (taken.status === "decided") {
    const stored = terminalEventOf(taken.state);
    if (stored) await deps.publish([stored], requests);
    return true;
  }
  return false;
}

function invokeTool(job: ToolCallJob, attempt: number, scope: BatchScope): Promise<ToolRun> {
  const { deps, context, now } = scope;
  return deps.registry.invoke(
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
}

/** A permanent failure is stored under the claim and its outcome published; a transient one is thrown. */
async function settleFailure(
  job: ToolCallJob,
  error: unknown,
  attempt: number,
  begun: number,
  fence: ClaimFence,
  scope: BatchScope,
): Promise<JobRun> {
  const { deps, cache, requests, now } = scope;
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
  return JobRun.Failed;
}
