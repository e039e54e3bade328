/**
 * A synthetic stream of tool-call lifecycles, for the request-count test, the property test and the
 * benchmark: each call is requested, started, maybe failed (retryable) and started again, then
 * completed or failed; calls overlap in time, some events arrive late (after later events of their
 * call), and some records are sent twice, as a producer retry would.
 */
import { encodeLifecycleEventRecord, type ToolCallLifecycleEvent } from "@mcp-pipeline/contracts";
import { kinesisRecord } from "@mcp-pipeline/emulators/testing";
import { seededRandom } from "@mcp-pipeline/retry";
import type { KinesisStreamRecord } from "aws-lambda";

export interface WorkloadOptions {
  readonly calls: number;
  readonly sessions: number;
  /** Total records, duplicates included; at least the number of distinct events generated. */
  readonly records?: number;
  /** Fraction of calls with one retryable failure and a second attempt (exactly round(rate x calls) of them). */
  readonly retryRate: number;
  /** Fraction of events delivered late: moved after later events of their call. */
  readonly lateRate: number;
  readonly rng: () => number;
  /** Prefix of call and event ids, so runs on one table do not meet. */
  readonly prefix?: string;
}

export interface Workload {
  /** Distinct events, in stream order. */
  readonly events: readonly ToolCallLifecycleEvent[];
  /** The stream: every event once, plus duplicates, in order. */
  readonly records: readonly KinesisStreamRecord[];
  readonly duplicates: number;
}

const base = Date.UTC(2026, 10, 30, 10, 0, 0);
const at = (ms: number) => new Date(base + ms).toISOString();

function lifecycle(call: number, options: WorkloadOptions, retries: boolean): ToolCallLifecycleEvent[] {
  const { rng } = options;
  const prefix = options.prefix ?? "";
  const callId = `${prefix}call-${call}`;
  const env = {
    specVersion: "1.0",
    sessionId: `session-${call % options.sessions}`,
    callId,
    tool: "text.stats",
  } as const;
  let t = Math.floor(rng() * 10_000);
  let n = 0;
  const next = () => {
    t += 1 + Math.floor(rng() * 200);
    n += 1;
    return { eventId: `${callId}-e${n}`, occurredAt: at(t) };
  };
  const events: ToolCallLifecycleEvent[] = [
    { ...env, ...next(), type: "tool_call.requested", argumentsDigest: "d".repeat(64) },
    { ...env, ...next(), type: "tool_call.started", attempt: 1 },
  ];
  let attempt = 1;
  if (retries) {
    events.push({
      ...env,
      ...next(),
      type: "tool_call.failed",
      durationMs: 40,
      error: { code: "throttled", message: "downstream throttled", retryable: true },
    });
    attempt = 2;
    events.push({ ...env, ...next(), type: "tool_call.started", attempt });
  }
  if (rng() < 0.9) {
    events.push({
      ...env,
      ...next(),
      type: "tool_call.completed",
      durationMs: 120,
      result: { sizeBytes: 42, summary: "42 words", location: { kind: "inline" } },
    });
  } else {
    events.push({
      ...env,
      ...next(),
      type: "tool_call.failed",
      durationMs: 80,
      error: { code: "invalid-arguments", message: "text is empty", retryable: false },
    });
  }
  return events;
}

export function lifecycleWorkload(options: WorkloadOptions): Workload {
  const { rng } = options;
  const retrying = Math.round(options.retryRate * options.calls);
  const all = Array.from({ length: options.calls }, (_, call) =>
    lifecycle(call, options, call < retrying),
  ).flat();
  // Stream order: when the event happened, except late ones, which arrive up to 2 s after.
  const arrival = new Map(
    all.map((e) => [
      e.eventId,
      Date.parse(e.occurredAt) + (rng() < options.lateRate ? 500 + Math.floor(rng() * 1_500) : 0),
    ]),
  );
  const events = [...all].sort(
    (a, b) =>
      (arrival.get(a.eventId) ?? 0) - (arrival.get(b.eventId) ?? 0) || (a.eventId < b.eventId ? -1 : 1),
  );
  const total = options.records ?? events.length;
  if (total < events.length) {
    throw new RangeError(`${total} records cannot hold ${events.length} distinct events`);
  }
  // Producer retries: a copy of an event, put again a little later in the stream.
  const stream: ToolCallLifecycleEvent[] = [...events];
  for (let d = 0; d < total - events.length; d++) {
    const original = Math.floor(rng() * stream.length);
    const later = Math.min(stream.length, original + 1 + Math.floor(rng() * 50));
    stream.splice(later, 0, stream[original] as ToolCallLifecycleEvent);
  }
  const records = stream.map((e, i) => {
    const { data, partitionKey } = encodeLifecycleEventRecord(e);
    return kinesisRecord({ partitionKey, data, sequence: i });
  });
  return { events, records, duplicates: total - events.length };
}

/**
 * The synthetic batch of issue 12: 1,000 records over 300 calls, 950 distinct events (every call
 * requested, started and completed or failed; 25 calls fail once and start again), 5% of events late
 * and 50 producer duplicates (5%). The request-count test and the benchmark use this very batch.
 */
export function syntheticBatch(): Workload {
  return lifecycleWorkload({
    calls: 300,
    sessions: 40,
    records: 1_000,
    retryRate: 25 / 300,
    lateRate: 0.05,
    rng: seededRandom(12),
  });
}
