/**
 * What the mappings hand the functions and what comes back, seen where the Lambda service stands:
 * - outside the injector (`observeInvocations`): the processor's first delivery of each record and the
 *   lifecycle events in it (the outcomes the workers published), the fifo-worker's of each job (stalls),
 *   and dlq-redrive's failure records, which name the ranges the Kinesis mapping gave up on (§1.6); the
 *   failure queue is dlq-redrive's to consume, so the ledger reads it here instead of receiving from it;
 * - inside it (`observeOutcomes`): each worker invocation as the function itself ran it, from its start
 *   to its end, for each of its jobs (a door's fault explains a second run of a job's tool only inside the
 *   invocation that held the first), and whose jobs had their lease end with it when it ran out of time (a
 *   real timeout, or a run so long that its deadline margin cut the jobs' requests off), an incident that
 *   explains a second run of their tools.
 */

import { MARGIN_SHARE } from "@mcp-pipeline/batch";
import type { FunctionName, InvokeFunction, SentRequest } from "@mcp-pipeline/local-runtime";
import type { EnvironmentSettings } from "@mcp-pipeline/settings";
import { failureRangeOf } from "./failure-range.js";
import type { Ledger } from "./ledger.js";
import { RunCause, type SentRun } from "./tool-runs.js";
import { EFFECT_PATH } from "./witness.js";

interface Records {
  readonly Records?: readonly {
    readonly kinesis?: { readonly sequenceNumber?: string; readonly data?: string };
    readonly messageId?: string;
    readonly body?: string;
  }[];
}

function callIdOf(body: string): string | undefined {
  try {
    const callId = (JSON.parse(body) as { callId?: unknown }).callId;
    return typeof callId === "string" ? callId : undefined;
  } catch {
    return undefined;
  }
}

const recordsOf = (event: unknown) => (event as Records).Records ?? [];

export function observeInvocations(
  ledger: Ledger,
): (name: FunctionName, invoke: InvokeFunction) => InvokeFunction {
  return (name, invoke) => async (event) => {
    const records = recordsOf(event);
    const now = Date.now();
    if (name === "processor") {
      ledger.processorDelivered(
        records.map((r) => ({ sequenceNumber: r.kinesis?.sequenceNumber ?? "", data: r.kinesis?.data })),
        now,
      );
    } else if (name === "fifo-worker") {
      ledger.fifoDelivered(
        records.flatMap((r) => callIdOf(r.body ?? "") ?? []),
        now,
      );
    } else if (name === "dlq-redrive") {
      for (const r of records) {
        // A body that is no failure record names no range: dlq-redrive sets it aside itself.
        const range = failureRangeOf(r.body ?? "");
        if (range) ledger.failureRange(r.messageId ?? "", range);
      }
    }
    return invoke(event);
  };
}

/**
 * How long after an invocation's start a worker's claim lasts at least: the worker takes its lease up to
 * the moment its requests are cut off (packages/worker process-jobs: `deadlines.requestsLeftMs()`), which
 * is the function's timeout less the requests' share of the deadline margin (packages/batch
 * requestDeadlines), both scaled as the local pipeline scales them (a duration in ms ÷ the time scale,
 * rounded). Measured from the invocation's call, before its sandbox even started, it can only be longer.
 */
export function workerLeaseMs(
  fn: { readonly timeout_seconds: number; readonly deadline_margin_ms: number },
  timeScale: number,
): number {
  const scale = (ms: number) => Math.max(1, Math.round(ms / timeScale));
  return scale(fn.timeout_seconds * 1000) - Math.round(scale(fn.deadline_margin_ms) * MARGIN_SHARE.requests);
}

const WORKERS = { "tool-worker": "tool_worker", "fifo-worker": "fifo_worker" } as const;

/**
 * The runs of each job an invocation sent, from its sandbox's record of its requests: those to the
 * witness's origin naming `/effects/<callId>`, decoded as the witness decodes the path.
 */
export function sentRunsByCall(
  requests: readonly SentRequest[],
  witnessOrigin: string,
): Map<string, SentRun[]> {
  const byCall = new Map<string, SentRun[]>();
  for (const request of requests) {
    if (request.origin !== witnessOrigin) continue;
    const path = request.path.split("?")[0] ?? "";
    if (!path.startsWith(EFFECT_PATH)) continue;
    let callId: string;
    try {
      callId = decodeURIComponent(path.slice(EFFECT_PATH.length));
    } catch {
      continue;
    }
    byCall.set(callId, [...(byCall.get(callId) ?? []), { at: request.at, key: request.idempotencyKey }]);
  }
  return byCall;
}

export function observeOutcomes(
  ledger: Ledger,
  settings: EnvironmentSettings,
  timeScale: number,
  witnessOrigin: string,
): (name: FunctionName, invoke: InvokeFunction) => InvokeFunction {
  return (name, invoke) => {
    if (name !== "tool-worker" && name !== "fifo-worker") return invoke;
    const fn = settings[WORKERS[name]];
    // Within this much of its timeout a worker starts nothing and cuts its requests off (the deadline margin).
    const slowFromMs = (fn.timeout_seconds * 1000 - fn.deadline_margin_ms) / timeScale;
    const leaseMs = workerLeaseMs(fn, timeScale);
    return async (event) => {
      const from = Date.now();
      const result = await invoke(event);
      const at = Date.now();
      const slow = (result.kind === "function-error" && result.timedOut) || at - from >= slowFromMs;
      // Which of the jobs' runs this invocation sent, as its sandbox recorded them: the judge pairs each
      // run the witness received with its sender (tool-runs.ts `recordedSenders`). Without a record (the
      // sandbox could not load) the invocation keeps none and its jobs' runs fall back to the times.
      const sent = result.requests && sentRunsByCall(result.requests, witnessOrigin);
      // A job in the batch twice (sent twice) was handed to this one invocation once: entered twice, its
      // requests would be counted as two invocations' and every run of it paired with both.
      const jobs = new Set(recordsOf(event).flatMap((r) => callIdOf(r.body ?? "") ?? []));
      for (const callId of jobs) {
        ledger.invoked(callId, {
          from,
          at,
          requestId: result.requestId,
          ...(sent ? { sent: sent.get(callId) ?? [] } : {}),
        });
        if (slow) ledger.incident(callId, { at, from, leaseMs, cause: RunCause.SlowInvocation });
      }
      return result;
    };
  };
}
