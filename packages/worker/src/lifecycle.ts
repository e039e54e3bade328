import { createHash } from "node:crypto";
import type { RequestOptions } from "@mcp-pipeline/aws";
import {
  CURRENT_SPEC_VERSION,
  failureCodeOf,
  messageOf,
  type ResultLocation,
  type ToolCallCompleted,
  type ToolCallFailed,
  type ToolCallJob,
  type ToolCallLifecycleEvent,
  type ToolCallStarted,
} from "@mcp-pipeline/contracts";
import type { ToolCallDeadLettered, ToolCallState } from "@mcp-pipeline/tool-calls";

/**
 * Event ids derived from the call: a worker that publishes the same event again after a crash uses
 * the same id, so the processor's idempotency recognises it. Hashed to stay within 128 characters
 * whatever the length of the call id.
 */
export function eventIdFor(callId: string, phase: "started" | "completed" | "failed", attempt = 0): string {
  const digest = createHash("sha256").update(`${callId}\u0000${phase}\u0000${attempt}`).digest("hex");
  return `${phase}-${digest.slice(0, 40)}`;
}

const iso = (ms: number) => new Date(ms).toISOString();

function envelope(job: Pick<ToolCallJob, "callId" | "sessionId" | "tool">) {
  return { specVersion: CURRENT_SPEC_VERSION, sessionId: job.sessionId, callId: job.callId, tool: job.tool };
}

export function startedEvent(job: ToolCallJob, attempt: number, at: number): ToolCallStarted {
  return {
    ...envelope(job),
    type: "tool_call.started",
    eventId: eventIdFor(job.callId, "started", attempt),
    occurredAt: iso(at),
    attempt,
  };
}

/** A short summary of a result for the event and the table: its start, at most 200 characters. */
export function summarise(json: string): string {
  return json.length <= 200 ? json : `${json.slice(0, 199)}…`;
}

export function completedEvent(
  job: ToolCallJob,
  result: { json: string; sizeBytes: number; location: ResultLocation; durationMs: number },
  at: number,
): ToolCallCompleted {
  return {
    ...envelope(job),
    type: "tool_call.completed",
    eventId: eventIdFor(job.callId, "completed"),
    occurredAt: iso(at),
    durationMs: result.durationMs,
    result: { sizeBytes: result.sizeBytes, summary: summarise(result.json), location: result.location },
  };
}

export function failedEvent(
  job: ToolCallJob,
  error: unknown,
  retryable: boolean,
  attempt: number,
  durationMs: number,
  at: number,
): ToolCallFailed {
  return {
    ...envelope(job),
    type: "tool_call.failed",
    // A permanent failure is the call's one outcome; each retryable failure is its own event.
    eventId: eventIdFor(job.callId, "failed", retryable ? attempt : 0),
    occurredAt: iso(at),
    durationMs: Math.max(0, Math.round(durationMs)),
    error: { code: failureCodeOf(error).slice(0, 128), message: messageOf(error).slice(0, 2048), retryable },
  };
}

/**
 * The worker's record that a job's last allowed attempt did not succeed, so SQS moves it to the DLQ.
 * Its id names the message and the attempt: a job redriven (a new message) and dead-lettered again is a
 * new record, while the same attempt recorded twice is one.
 */
export function deadLetteredEvent(
  job: ToolCallJob,
  messageId: string,
  attempt: number,
  error: unknown,
  deadLetterQueue: string,
  at: number,
): ToolCallDeadLettered {
  const digest = createHash("sha256")
    .update(`${job.callId}\u0000dead-lettered\u0000${messageId}\u0000${attempt}`)
    .digest("hex");
  return {
    type: "tool_call.dead_lettered",
    eventId: `dead-lettered-${digest.slice(0, 40)}`,
    sessionId: job.sessionId,
    callId: job.callId,
    tool: job.tool,
    occurredAt: iso(at),
    attempt,
    deadLetterQueue,
    error: { code: failureCodeOf(error).slice(0, 128), message: messageOf(error).slice(0, 2048) },
  };
}

/**
 * The terminal event that decided a stored call's status, rebuilt from the table, so that a worker
 * that stored the outcome but crashed before publishing it can publish exactly that event again.
 */
export function terminalEventOf(state: ToolCallState): ToolCallCompleted | ToolCallFailed | undefined {
  const common = {
    ...envelope(state),
    eventId: state.statusEvent.eventId,
    occurredAt: state.statusEvent.occurredAt,
    durationMs: state.durationMs ?? 0,
  };
  if (state.status === "completed" && state.result) {
    return { ...common, type: "tool_call.completed", result: state.result };
  }
  if (state.status === "failed" && state.error) {
    return { ...common, type: "tool_call.failed", error: state.error };
  }
  return undefined;
}

/** Writes lifecycle events to the stream; `options.signal` aborts the writes (RequestOptions). */
export type PublishEvents = (
  events: readonly ToolCallLifecycleEvent[],
  options?: RequestOptions,
) => Promise<void>;
