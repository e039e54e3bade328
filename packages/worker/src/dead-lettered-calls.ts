import type { RequestOptions } from "@mcp-pipeline/aws";
import { type BatchOutcome, ItemStatus, needsRedelivery } from "@mcp-pipeline/batch";
import { type DecodeResult, messageOf, type ToolCallJob, TransientError } from "@mcp-pipeline/contracts";
import type { CallCache, ClaimFence } from "@mcp-pipeline/tool-calls";
import type { Claim } from "@mcp-pipeline/tool-calls/idempotency";
import type { SQSRecord } from "aws-lambda";
import { deadLetteredEvent } from "./lifecycle.js";
import { attemptOf } from "./redelivery-backoff.js";
import type { WorkerDeps } from "./worker-deps.js";

/**
 * Jobs reported for retry at their last receive will not come back: SQS moves them to the DLQ once
 * their receive count exceeds maxReceiveCount (§2.3, §9.2 item 5). Their calls are recorded as
 * dead-lettered so that the table does not show `retrying` forever. Best effort: a failed write is
 * logged; the job is in the DLQ either way, and its redrive moves the call on.
 */
export async function recordDeadLettered(
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
