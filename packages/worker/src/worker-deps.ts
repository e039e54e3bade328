import type { DeadLetterReason, RequestOptions } from "@mcp-pipeline/aws";
import type { ToolCallStore } from "@mcp-pipeline/tool-calls";
import type { IdempotencyStore } from "@mcp-pipeline/tool-calls/idempotency";
import type { ToolLogger, ToolRegistry } from "@mcp-pipeline/tools/registry";
import type { SQSRecord } from "aws-lambda";
import type { PublishEvents } from "./lifecycle.js";
import type { QueueMode } from "./queue-mode.js";
import type { Redelivery } from "./redelivery.js";
import type { PlacedResult } from "./result-store.js";

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
