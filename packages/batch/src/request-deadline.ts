import { TransientError } from "@mcp-pipeline/contracts";
import type { RemainingTime } from "./deadline.js";

/**
 * How the deadline margin (deadlineFromContext: nothing new starts once less than it remains) is shared
 * out once nothing new starts, as fractions of it:
 *
 * - margin .. margin x `requests`: what is in flight finishes. The tools' own budget already ends at the
 *   margin, so this is the writes after them (result, table, stream, dedupe row). At margin x `requests`
 *   every request still open is aborted: its record fails alone, transiently, and is reported for retry.
 *   Without the abort one slow request (an SDK request is otherwise unbounded: the HTTP handler's
 *   requestTimeout only warns) runs the invocation into its timeout, and Lambda then fails the whole
 *   batch and destroys the sandbox (docs/aws-semantics.md §2.3, §1.3 "During invocation").
 * - margin x `requests` .. margin x `settle`: the bookkeeping after the batch (the workers' dead-lettered
 *   marks and visibility changes), best effort, aborted at margin x `settle`.
 * - the last margin x `settle`: serialising the response, the log lines and metrics, and handing the answer
 *   back; a few milliseconds on AWS, more on a loaded machine where the local runtime's sandbox thread
 *   waits for its parent.
 *
 * Halves and quarters rather than fixed figures, because the margin is the one duration an operator sets
 * for this (deadline_margin_ms) and it scales with the function's timeout (the local pipeline divides
 * both by its time scale): a fixed reserve of, say, 500 ms would be larger than the whole 300 ms margin
 * of `npm start`. With the workers' 3,000 ms: 1,500 ms for the writes in flight, 750 ms for the
 * bookkeeping, 750 ms for the answer.
 */
export const MARGIN_SHARE = { requests: 0.5, settle: 0.25 } as const;

/** Which part of the invocation a request belonged to when its time ran out (see MARGIN_SHARE). */
export const DeadlineStage = { Requests: "requests", Settle: "settle" } as const;
export type DeadlineStage = (typeof DeadlineStage)[keyof typeof DeadlineStage];

/**
 * A request was aborted because the invocation reached the point where its stage must end. Transient: the
 * record it served is reported for retry. The request may still have been applied at the server (the
 * abort only stops waiting for the answer), so what it wrote must be safe to see again: see
 * docs/idempotency.md "Requests cut off by the deadline".
 */
export class InvocationDeadlineError extends TransientError {
  readonly stage: DeadlineStage;
  /** How much of the invocation was left when the stage ended, ms. */
  readonly reserveMs: number;

  constructor(stage: DeadlineStage, reserveMs: number, options?: ErrorOptions) {
    super(
      "invocation-deadline",
      `aborted: less than ${reserveMs} ms of the invocation left for ${stage}; raise deadline_margin_ms if requests are this slow`,
      options,
    );
    this.name = "InvocationDeadlineError";
    this.stage = stage;
    this.reserveMs = reserveMs;
  }
}

/** The abort signals of one invocation's stages; `dispose` clears their timers when the invocation ends. */
export interface RequestDeadlines {
  /** Aborts the requests made for the batch's records (MARGIN_SHARE.requests). */
  readonly requests: AbortSignal;
  /** Aborts the bookkeeping after the batch (MARGIN_SHARE.settle). */
  readonly settle: AbortSignal;
  /** Milliseconds until `requests` aborts, from now; a lease taken now should end then. */
  readonly requestsLeftMs: () => number;
  readonly dispose: () => void;
}

/** The longest delay a Node timer holds; a longer one (or Infinity) fires after 1 ms instead. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The context's remaining time, checked: a number that is not one (NaN, a string) would make the stages
 * end at once while the engine's deadline never comes. Negative is the deadline passed; Infinity, none.
 */
function remainingMs(context: RemainingTime): number {
  const ms: unknown = context.getRemainingTimeInMillis();
  if (typeof ms !== "number" || Number.isNaN(ms)) {
    throw new RangeError(
      `getRemainingTimeInMillis() must return a number of milliseconds, got ${typeof ms} ${String(ms)}`,
    );
  }
  return ms;
}

function abortWhenLeft(context: RemainingTime, reserveMs: number, stage: DeadlineStage) {
  const controller = new AbortController();
  const abort = () => controller.abort(new InvocationDeadlineError(stage, reserveMs));
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The remaining time falls with the wall clock, so a timer set now fires when it reaches the reserve;
  // one too long for a timer is set again, from the remaining time then, once its longest delay is over.
  const arm = (inMs: number): void => {
    if (inMs <= 0) {
      abort();
      return;
    }
    if (inMs === Number.POSITIVE_INFINITY) return;
    timer =
      inMs > MAX_TIMER_MS
        ? setTimeout(() => arm(context.getRemainingTimeInMillis() - reserveMs), MAX_TIMER_MS)
        : setTimeout(abort, inMs);
    // Unref'd: a timer must not keep a sandbox's event loop alive after the answer.
    timer.unref();
  };
  arm(remainingMs(context) - reserveMs);
  return { signal: controller.signal, dispose: () => clearTimeout(timer) };
}

/** The stages' signals for an invocation with `marginMs` as its deadline margin (the one deadlineFromContext uses). */
export function requestDeadlines(context: RemainingTime, marginMs: number): RequestDeadlines {
  if (typeof context?.getRemainingTimeInMillis !== "function") {
    throw new TypeError("requestDeadlines needs the invocation's context, with getRemainingTimeInMillis()");
  }
  if (!Number.isFinite(marginMs) || marginMs < 0) {
    throw new RangeError(`deadline margin must be a finite number of milliseconds >= 0, got ${marginMs}`);
  }
  const requestsReserveMs = Math.round(marginMs * MARGIN_SHARE.requests);
  const requests = abortWhenLeft(context, requestsReserveMs, DeadlineStage.Requests);
  const settle = abortWhenLeft(context, Math.round(marginMs * MARGIN_SHARE.settle), DeadlineStage.Settle);
  return {
    requests: requests.signal,
    settle: settle.signal,
    requestsLeftMs: () => remainingMs(context) - requestsReserveMs,
    dispose: () => {
      requests.dispose();
      settle.dispose();
    },
  };
}

/**
 * The error to report for a failure under `signal`: the SDK rejects an aborted request with its own
 * `AbortError` (the signal's reason as its `cause`), and a call made of several requests may name the abort
 * as its error's `cause` (putAllRecords); the record is better reported with the deadline's error, which says
 * what ran out and what to tune. Any other error is returned as it is.
 */
export function deadlineErrorOf(error: unknown, signal: AbortSignal): unknown {
  if (!signal.aborted || !(signal.reason instanceof InvocationDeadlineError)) return error;
  if (error === signal.reason) return error;
  const { name, cause } = (error ?? {}) as { name?: unknown; cause?: unknown };
  if (name !== "AbortError" && cause !== signal.reason) return error;
  return new InvocationDeadlineError(signal.reason.stage, signal.reason.reserveMs, { cause: error });
}

/** Runs one invocation's work with its stages' signals, and clears their timers when it ends. */
export async function withRequestDeadlines<T>(
  context: RemainingTime,
  marginMs: number,
  work: (deadlines: RequestDeadlines) => Promise<T>,
): Promise<T> {
  const deadlines = requestDeadlines(context, marginMs);
  try {
    return await work(deadlines);
  } finally {
    deadlines.dispose();
  }
}
