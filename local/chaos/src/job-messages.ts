import type { SendMessageBatchRequestEntry } from "@aws-sdk/client-sqs";
import type { JobItem } from "@mcp-pipeline/local-runtime";

/** One send of a job: its position in the scenario's job list and which copy (a producer's resend). */
export interface JobSend {
  readonly job: JobItem;
  readonly index: number;
  readonly copy: number;
}

/**
 * The message of one send. On a FIFO queue each (job, copy) has a deduplication id of its own for the
 * whole run: SQS suppresses a send whose id it saw in the last five minutes and answers it with success
 * (docs/aws-semantics.md §3), so two poison jobs sharing an id would be one message that the ledger
 * waits on twice. Poison jobs have no call id; their position in the job list names them.
 */
export function jobMessage(
  { job, index, copy }: JobSend,
  fifo: boolean,
): Omit<SendMessageBatchRequestEntry, "Id"> {
  if (!fifo) return { MessageBody: job.body };
  return {
    MessageBody: job.body,
    MessageGroupId: job.group,
    // A second copy has its own id: a producer retry after SQS's five-minute window (§3), which only
    // idempotency catches. A FIFO resend of the same copy while SQS is down is deduplicated.
    MessageDeduplicationId: `${job.kind === "job" ? job.callId : `poison-${index}`}-${copy}`,
  };
}
