/** A reproducible workload: lifecycle events for the stream and jobs for both queues, with injected faults. */
import { createHash } from "node:crypto";
import { CURRENT_SPEC_VERSION, encodeLifecycleEvent, encodeToolCallJob } from "@mcp-pipeline/contracts";
import { seededRandom } from "@mcp-pipeline/retry";

export interface ScenarioOptions {
  readonly events: number;
  readonly jobs: number;
  readonly fifoJobs: number;
  readonly sessions: number;
  /** Fraction of stream records and of queue messages that can never be read. */
  readonly poisonRate: number;
  /** Fraction of jobs whose first attempt fails transiently (a retry cures them). */
  readonly transientRate: number;
  /** Fraction of stream records that are sent twice, as a producer retry would. */
  readonly duplicateRate: number;
  /**
   * Fraction of stream events whose writes keep failing (the local fault proxy throttles them) until
   * the processor's retries run out: they and the rest of their batch go to the failure queue.
   */
  readonly stuckRate?: number;
  readonly seed: number;
}

export type StreamItem =
  | {
      /** A valid event; `stuck` ones are refused by the fault proxy until faults are turned off. */
      readonly kind: "event" | "stuck";
      readonly data: Uint8Array;
      readonly partitionKey: string;
      readonly callId: string;
    }
  | {
      readonly kind: "duplicate";
      readonly data: Uint8Array;
      readonly partitionKey: string;
      readonly callId: string;
    }
  | { readonly kind: "poison"; readonly data: Uint8Array; readonly partitionKey: string };

export type JobItem =
  | {
      readonly kind: "job";
      readonly body: string;
      readonly callId: string;
      readonly group: string;
      readonly transient: boolean;
      readonly enqueuedAt: number;
    }
  | { readonly kind: "poison"; readonly body: string; readonly group: string };

export interface Scenario {
  readonly stream: StreamItem[];
  readonly jobs: JobItem[];
  readonly fifoJobs: JobItem[];
}

/** Ids of events whose writes the local fault proxy refuses while faults are active. */
export const STUCK_PREFIX = "stuck-";

const utf8 = new TextEncoder();
const POISON_RECORDS = [
  Uint8Array.from([0xff, 0xfe, 0x00, 0x41]),
  utf8.encode("{ not json"),
  utf8.encode(JSON.stringify({ specVersion: "1.0", type: "tool_call.started" })),
  utf8.encode(JSON.stringify({ specVersion: "9.0", type: "tool_call.requested" })),
];
const POISON_BODIES = [
  "not json at all",
  JSON.stringify({ specVersion: "1.0", tool: "x" }),
  '{"specVersion":"7.1"}',
];

export function buildScenario(options: ScenarioOptions, now: number = Date.now()): Scenario {
  const rng = seededRandom(options.seed);
  const session = () => `session-${Math.floor(rng() * options.sessions)}`;
  const run = `${options.seed}`;

  const stream: StreamItem[] = [];
  for (let i = 0; i < options.events; i++) {
    const partitionKey = session();
    if (rng() < options.poisonRate) {
      stream.push({
        kind: "poison",
        partitionKey,
        data: POISON_RECORDS[i % POISON_RECORDS.length] as Uint8Array,
      });
      continue;
    }
    const stuck = rng() < (options.stuckRate ?? 0);
    const callId = `${stuck ? STUCK_PREFIX : "ext-"}${run}-${i}`;
    const data = utf8.encode(
      encodeLifecycleEvent({
        specVersion: CURRENT_SPEC_VERSION,
        type: "tool_call.requested",
        eventId: `${stuck ? STUCK_PREFIX : "ev-"}${run}-${i}`,
        callId,
        sessionId: partitionKey,
        tool: "text.stats",
        occurredAt: new Date(now).toISOString(),
        argumentsDigest: createHash("sha256").update(callId).digest("hex"),
      }),
    );
    stream.push({ kind: stuck ? "stuck" : "event", data, partitionKey, callId });
    if (rng() < options.duplicateRate) stream.push({ kind: "duplicate", data, partitionKey, callId });
  }

  const jobsFor = (count: number, prefix: string): JobItem[] =>
    Array.from({ length: count }, (_, i) => {
      const group = session();
      if (rng() < options.poisonRate) {
        return { kind: "poison", body: POISON_BODIES[i % POISON_BODIES.length] as string, group };
      }
      const callId = `${prefix}-${run}-${i}`;
      const transient = rng() < options.transientRate;
      const big = rng() < 0.02;
      const args = {
        latencyMs: 5 + Math.floor(rng() * 45),
        ...(big ? { resultBytes: 300_000 } : {}),
        ...(transient ? { failUntilAttempt: 1 } : {}),
      };
      const enqueuedAt = now;
      const body = encodeToolCallJob({
        specVersion: CURRENT_SPEC_VERSION,
        callId,
        sessionId: group,
        tool: i % 5 === 0 ? "text.stats" : "load.latency",
        arguments: i % 5 === 0 ? { text: `job ${i} of run ${run}` } : args,
        enqueuedAt: new Date(enqueuedAt).toISOString(),
      });
      return { kind: "job", body, callId, group, transient: i % 5 !== 0 && transient, enqueuedAt };
    });

  return { stream, jobs: jobsFor(options.jobs, "job"), fifoJobs: jobsFor(options.fifoJobs, "fifo") };
}
