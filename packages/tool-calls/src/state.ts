import type { ResultLocation, ToolCallLifecycleEvent } from "@mcp-pipeline/contracts";

export const CallStatus = {
  Requested: "requested",
  Started: "started",
  /** An attempt failed and the queue will retry it. */
  Retrying: "retrying",
  Completed: "completed",
  Failed: "failed",
  /**
   * The last attempt SQS allows (the queue's maxReceiveCount) failed: SQS moves the job to the DLQ
   * (docs/aws-semantics.md §2.3, §9.2 item 5). `deadLetter` says where. Not final: a redriven job's next
   * attempt supersedes it.
   */
  DeadLettered: "dead-lettered",
} as const;
export type CallStatus = (typeof CallStatus)[keyof typeof CallStatus];

/**
 * The worker's record that a call's job is leaving the pipeline for its queue's DLQ. Not a wire event
 * (the stream never carries it): only the worker knows the receive count and the queue; it writes it to
 * the table itself, and it folds into the call's state like any event.
 */
export interface ToolCallDeadLettered {
  readonly type: "tool_call.dead_lettered";
  readonly eventId: string;
  readonly callId: string;
  readonly sessionId: string;
  readonly tool: string;
  readonly occurredAt: string;
  /** The receive count of the last attempt (the queue's maxReceiveCount). */
  readonly attempt: number;
  /** Where the job is: the source queue's DLQ (URL or ARN). */
  readonly deadLetterQueue: string;
  /** The last attempt's error. */
  readonly error: { readonly code: string; readonly message: string };
}

/** What folds into a call's state: the lifecycle events, and the worker's dead-letter record. */
export type CallEvent = ToolCallLifecycleEvent | ToolCallDeadLettered;

/** How many recent event ids a call remembers to recognise duplicates without a write. */
export const RECENT_EVENT_IDS = 32;

/**
 * A worker's claim on a call, as its item records it: the dedupe table's claim token (src/idempotency/)
 * of the invocation that last took the call, and when that claim's lease ends (epoch ms). Only the holder
 * may write the call's outcome (fence.ts, docs/idempotency.md "Fencing outcomes by the claim").
 */
export interface CallClaim {
  readonly token: string;
  readonly leaseExpiresAt: number;
}

/** One item of the tool-calls table. */
export interface ToolCallState {
  readonly callId: string;
  readonly sessionId: string;
  readonly tool: string;
  readonly status: CallStatus;
  /** The event that decided `status`, to compare later events against. */
  readonly statusEvent: { readonly eventId: string; readonly occurredAt: string };
  readonly requestedAt?: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly attempts: number;
  readonly argumentsDigest?: string;
  readonly durationMs?: number;
  readonly result?: {
    readonly sizeBytes: number;
    readonly summary: string;
    readonly location: ResultLocation;
  };
  readonly error?: { readonly code: string; readonly message: string; readonly retryable: boolean };
  /** While `status` is dead-lettered: where the job went, after which attempt, and when. */
  readonly deadLetter?: { readonly queue: string; readonly attempt: number; readonly at: string };
  /**
   * The result itself as JSON text, when `result.location` is inline. Only the worker that ran the
   * call has it, so it arrives with the worker's own write of the completed event; the processor's
   * later copy of that event from the stream is a duplicate and leaves it in place.
   */
  readonly output?: string;
  /**
   * The claim that may write the call's outcome, set by the worker that takes the call
   * (`ToolCallStore.claimCall`, with its `started`). Not part of the join: every fold carries it unchanged,
   * and only a claim registered after it replaces it.
   */
  readonly claim?: CallClaim;
  readonly lastEventAt: string;
  readonly recentEventIds: readonly string[];
  /** Optimistic-concurrency version of the item. */
  readonly version: number;
}

export type ApplyChange = "created" | "updated" | "duplicate" | "unchanged";

export interface Applied {
  readonly state: ToolCallState;
  readonly change: ApplyChange;
}

function statusOf(event: CallEvent): CallStatus {
  switch (event.type) {
    case "tool_call.dead_lettered":
      return CallStatus.DeadLettered;
    case "tool_call.requested":
      return CallStatus.Requested;
    case "tool_call.started":
      return CallStatus.Started;
    case "tool_call.completed":
      return CallStatus.Completed;
    case "tool_call.failed":
      return event.error.retryable ? CallStatus.Retrying : CallStatus.Failed;
  }
}

const RANK: Record<CallStatus, number> = {
  requested: 1,
  started: 2,
  retrying: 2,
  "dead-lettered": 2,
  completed: 3,
  failed: 3,
};
const isTerminal = (s: CallStatus): boolean => RANK[s] === 3;

/** Whether the call has its final outcome (completed or failed): nothing a worker does changes it. */
export function isFinal(state: ToolCallState | undefined): boolean {
  return state !== undefined && isTerminal(state.status);
}
/**
 * Among non-terminal statuses of one instant, the one that ends an attempt's story wins: an attempt's
 * failure is after its start, and its dead-lettering after its failure (the worker records both at once).
 */
const SAME_INSTANT: Record<CallStatus, number> = {
  requested: 0,
  started: 1,
  retrying: 2,
  "dead-lettered": 3,
  completed: 0,
  failed: 0,
};

/**
 * Whether an event with status `b` at `bAt` decides the call's status over `a` at `aAt`.
 * Terminal beats non-terminal; among terminals the first to happen wins (a late retry never
 * overwrites a finished call); among the rest the higher phase, then the later event, wins (so a
 * redriven job's next attempt supersedes its dead-lettering, and a stale one does not).
 * Ties fall to the attempt's order (SAME_INSTANT), then to the event id, so the order is total.
 */
function decides(
  b: CallStatus,
  bEvent: ToolCallState["statusEvent"],
  a: CallStatus,
  aEvent: ToolCallState["statusEvent"],
): boolean {
  if (RANK[b] !== RANK[a]) return RANK[b] > RANK[a];
  if (bEvent.occurredAt !== aEvent.occurredAt) {
    return isTerminal(b) ? bEvent.occurredAt < aEvent.occurredAt : bEvent.occurredAt > aEvent.occurredAt;
  }
  if (isTerminal(b) && a !== b) return b === CallStatus.Completed;
  if (SAME_INSTANT[b] !== SAME_INSTANT[a]) return SAME_INSTANT[b] > SAME_INSTANT[a];
  return bEvent.eventId > aEvent.eventId;
}

// ISO-8601 UTC instants of one precision compare correctly as strings.
const minOf = (a: string | undefined, b: string): string => (a === undefined || b < a ? b : a);
const maxOf = (a: string, b: string): string => (b > a ? b : a);

/** The digest of the earliest request; equal instants fall to the smaller digest, keeping the fold commutative. */
function earliestDigest(state: ToolCallState, occurredAt: string, digest: string): string {
  if (state.requestedAt === undefined || state.argumentsDigest === undefined) return digest;
  if (occurredAt !== state.requestedAt)
    return occurredAt < state.requestedAt ? digest : state.argumentsDigest;
  return digest < state.argumentsDigest ? digest : state.argumentsDigest;
}

/**
 * Folds one event into a call's state. The fold is a join: idempotent, commutative and associative,
 * so the state is a function of the set of events seen, whatever their order or repetition. That is
 * what makes the effect safe to repeat after a crash between the write and the idempotency
 * completion, and what keeps a late, duplicate or out-of-order event from moving a call backwards.
 */
export function applyEvent(current: ToolCallState | undefined, event: CallEvent, output?: string): Applied {
  if (current?.recentEventIds.includes(event.eventId)) return { state: current, change: "duplicate" };

  const status = statusOf(event);
  const statusEvent = { eventId: event.eventId, occurredAt: event.occurredAt };
  const base: ToolCallState = current ?? firstState(event, status, statusEvent);
  const takesStatus =
    current === undefined || decides(status, statusEvent, current.status, current.statusEvent);

  let next: ToolCallState = {
    ...base,
    lastEventAt: maxOf(base.lastEventAt, event.occurredAt),
  };
  if (takesStatus) next = withStatus(next, status, statusEvent);
  next = withEventFields(next, event, takesStatus, output);

  if (current !== undefined && sameContent(current, next)) return { state: current, change: "unchanged" };
  return {
    state: {
      ...next,
      recentEventIds: [...base.recentEventIds, event.eventId].slice(-RECENT_EVENT_IDS),
      version: base.version + 1,
    },
    change: current === undefined ? "created" : "updated",
  };
}

/** The state of a call no event has reached yet, as its first event makes it. */
function firstState(
  event: CallEvent,
  status: CallStatus,
  statusEvent: ToolCallState["statusEvent"],
): ToolCallState {
  return {
    callId: event.callId,
    sessionId: event.sessionId,
    tool: event.tool,
    status,
    statusEvent,
    attempts: 0,
    lastEventAt: event.occurredAt,
    recentEventIds: [],
    version: 0,
  };
}

function withStatus(
  next: ToolCallState,
  status: CallStatus,
  statusEvent: ToolCallState["statusEvent"],
): ToolCallState {
  // Outcome fields belong to the event that decides the status: drop those of the one it replaces.
  const { finishedAt: _f, durationMs: _d, result: _r, error: _e, output: _o, deadLetter: _l, ...rest } = next;
  return { ...rest, status, statusEvent };
}

/**
 * The fields an event of each type brings: the earliest instants and the highest attempt from any
 * event, an outcome only from the event that decides the status.
 */
function withEventFields(
  next: ToolCallState,
  event: CallEvent,
  takesStatus: boolean,
  output: string | undefined,
): ToolCallState {
  switch (event.type) {
    case "tool_call.requested":
      return {
        ...next,
        requestedAt: minOf(next.requestedAt, event.occurredAt),
        argumentsDigest: earliestDigest(next, event.occurredAt, event.argumentsDigest),
      };
    case "tool_call.started":
      return {
        ...next,
        startedAt: minOf(next.startedAt, event.occurredAt),
        attempts: Math.max(next.attempts, event.attempt),
      };
    case "tool_call.completed":
      if (!takesStatus) return next;
      return {
        ...next,
        finishedAt: event.occurredAt,
        durationMs: event.durationMs,
        result: event.result,
        ...(output !== undefined && event.result.location.kind === "inline" ? { output } : {}),
      };
    case "tool_call.dead_lettered": {
      const attempted = { ...next, attempts: Math.max(next.attempts, event.attempt) };
      if (!takesStatus) return attempted;
      return {
        ...attempted,
        error: { ...event.error, retryable: true },
        deadLetter: { queue: event.deadLetterQueue, attempt: event.attempt, at: event.occurredAt },
      };
    }
    case "tool_call.failed":
      if (!takesStatus) return next;
      return {
        ...next,
        durationMs: event.durationMs,
        error: event.error,
        ...(event.error.retryable ? {} : { finishedAt: event.occurredAt }),
      };
  }
}

function sameContent(a: ToolCallState, b: ToolCallState): boolean {
  const strip = ({ recentEventIds: _i, version: _v, ...rest }: ToolCallState) => rest;
  return JSON.stringify(sortKeys(strip(a))) === JSON.stringify(sortKeys(strip(b)));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, sortKeys(v)]),
    );
  }
  return value;
}
