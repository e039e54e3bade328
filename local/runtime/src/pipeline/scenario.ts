/** A reproducible workload: lifecycle events for the stream and jobs for both queues, with injected faults. */
import { createHash } from "node:crypto";
import {
  CURRENT_SPEC_VERSION,
  encodeLifecycleEvent,
  encodeToolCallJob,
  type ToolCallLifecycleEvent,
} from "@mcp-pipeline/contracts";
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
  /**
   * Calls of several lifecycle events each (requested, started, sometimes a second start, then completed
   * or failed, or still under way), interleaved across calls and sessions, each call's events in the
   * order they happened. Absent or false: one `tool_call.requested` per call.
   */
  readonly lifecycle?: boolean;
  /**
   * Jobs call the downstream with the `http.request` tool (POST /effects/<callId>, what the job asks of
   * the downstream in the body), and each job's `tool_call.requested` goes into the stream too, as the
   * server that enqueues a job announces it: the processor and the workers then write the same calls.
   * Absent or false: the load tools, and no stream event for a job.
   */
  readonly downstream?: boolean;
  /** With `downstream`: fraction of jobs the downstream refuses for good (a 422: stored as failed). */
  readonly rejectRate?: number;
  /**
   * With `lifecycle`: fraction of the stuck events that stay stuck through their first replay (given up
   * again, quarantined again) and are released only at the second.
   */
  readonly stuckTwiceRate?: number;
}

interface ValidStreamItem {
  /** A valid event; `stuck` ones are refused by the fault proxy until faults are turned off. */
  readonly kind: "event" | "stuck" | "duplicate";
  readonly data: Uint8Array;
  readonly partitionKey: string;
  readonly callId: string;
  readonly eventId: string;
  readonly type: ToolCallLifecycleEvent["type"];
  /** Stuck events only (lifecycle): the replay round from which their writes are let through (1 or 2). */
  readonly releasedAtRound?: number;
}

export type StreamItem =
  | ValidStreamItem
  | { readonly kind: "poison"; readonly data: Uint8Array; readonly partitionKey: string };

export type JobItem =
  | {
      readonly kind: "job";
      readonly body: string;
      readonly callId: string;
      readonly group: string;
      readonly transient: boolean;
      /** The downstream refuses it for good (`downstream` scenarios): it ends failed, with no effect. */
      readonly rejected?: boolean;
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

/** The stuck event id of a lifecycle scenario: `stuck-r<round>-…`, released at that replay round. */
export function stuckEventId(round: number, rest: string): string {
  return `${STUCK_PREFIX}r${round}-${rest}`;
}

/** The rounds named by the stuck event ids in `text` (a DynamoDB request body). */
export function stuckRounds(text: string): number[] {
  return [...text.matchAll(/"stuck-r(\d+)-/g)].map((m) => Number(m[1]));
}

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

/** The path of a downstream job's request: what the witness reads the call id from. */
export function downstreamPath(callId: string): string {
  return `/effects/${encodeURIComponent(callId)}`;
}

const digestOf = (callId: string) => createHash("sha256").update(callId).digest("hex");

/** One call's lifecycle: requested, then as far as its length goes; each event one millisecond apart. */
function lifecycleOf(
  callId: string,
  sessionId: string,
  length: number,
  failed: boolean,
): (Omit<ToolCallLifecycleEvent, "eventId" | "occurredAt" | "specVersion"> & { step: string })[] {
  const base = { callId, sessionId, tool: "text.stats" } as const;
  const steps = [
    { ...base, step: "requested", type: "tool_call.requested" as const, argumentsDigest: digestOf(callId) },
    { ...base, step: "started-1", type: "tool_call.started" as const, attempt: 1 },
    { ...base, step: "started-2", type: "tool_call.started" as const, attempt: 2 },
    failed
      ? {
          ...base,
          step: "failed",
          type: "tool_call.failed" as const,
          durationMs: 12,
          error: { code: "tool-error", message: "the tool refused the arguments", retryable: false },
        }
      : {
          ...base,
          step: "completed",
          type: "tool_call.completed" as const,
          durationMs: 12,
          result: { sizeBytes: 42, summary: `result of ${callId}`, location: { kind: "inline" as const } },
        },
  ];
  // Length 1: requested; 2: and started; 3: and finished; 4: and started again before it finished.
  if (length === 1) return steps.slice(0, 1);
  if (length === 2) return steps.slice(0, 2);
  if (length === 3) return [steps[0], steps[1], steps[3]] as typeof steps;
  return steps;
}

export function buildScenario(options: ScenarioOptions, now: number = Date.now()): Scenario {
  const rng = seededRandom(options.seed);
  const session = () => `session-${Math.floor(rng() * options.sessions)}`;
  const run = `${options.seed}`;
  if (!options.lifecycle) {
    const stream = requestedStream(options, rng, session, run, now);
    const jobs = jobsFor(options, rng, session, now, options.jobs, "job");
    return { stream, jobs, fifoJobs: jobsFor(options, rng, session, now, options.fifoJobs, "fifo") };
  }
  // The jobs first: the stream announces them.
  const jobs = jobsFor(options, rng, session, now, options.jobs, "job");
  const fifoJobs = jobsFor(options, rng, session, now, options.fifoJobs, "fifo");
  // Both queues' jobs in the order they are sent: each list is sent in proportion over the run.
  const byShare = (list: JobItem[]) => list.map((job, i) => ({ job, share: i / list.length }));
  const announced = options.downstream
    ? [...byShare(jobs), ...byShare(fifoJobs)].sort((a, b) => a.share - b.share).map((j) => j.job)
    : [];
  return { stream: lifecycleStream(options, rng, session, now, announced), jobs, fifoJobs };
}

/** One `tool_call.requested` per call (the default scenario). */
function requestedStream(
  options: ScenarioOptions,
  rng: () => number,
  session: () => string,
  run: string,
  now: number,
): StreamItem[] {
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
    const eventId = `${stuck ? STUCK_PREFIX : "ev-"}${run}-${i}`;
    const data = utf8.encode(
      encodeLifecycleEvent({
        specVersion: CURRENT_SPEC_VERSION,
        type: "tool_call.requested",
        eventId,
        callId,
        sessionId: partitionKey,
        tool: "text.stats",
        occurredAt: new Date(now).toISOString(),
        argumentsDigest: digestOf(callId),
      }),
    );
    const item = { data, partitionKey, callId, eventId, type: "tool_call.requested" } as const;
    stream.push({ kind: stuck ? "stuck" : "event", ...item });
    if (rng() < options.duplicateRate) stream.push({ kind: "duplicate", ...item });
  }
  return stream;
}

/**
 * Calls of several events, interleaved: up to eight calls are under way at once, each step takes the next
 * event of one of them at random, so a session's calls and the sessions' records mix in the stream while
 * each call's events stay in the order they happened (`occurredAt` grows by a millisecond a step). A
 * producer's second send of an event comes a few steps after the first. The jobs' requested events are
 * spread over the stream in the jobs' order, so each goes out with its job's chunk.
 */
function lifecycleStream(
  options: ScenarioOptions,
  rng: () => number,
  session: () => string,
  now: number,
  jobs: readonly JobItem[],
): StreamItem[] {
  const planner = new LifecyclePlanner(options, rng, session, now, jobs);
  for (let step = 0; step < options.events; step++) planner.step(step);
  return planner.end();
}

type PlannedEvent = ReturnType<typeof lifecycleOf>[number];
type Resend = { due: number; item: ValidStreamItem };
/** A call under way: its events, and the next one to put. */
type OpenCall = { events: PlannedEvent[]; next: number };
type AnnouncedJob = Extract<JobItem, { kind: "job" }>;

/** lifecycleStream's state between steps: the stream so far, the calls under way, the resends due. */
class LifecyclePlanner {
  readonly #options: ScenarioOptions;
  readonly #rng: () => number;
  readonly #session: () => string;
  readonly #now: number;
  readonly #run: string;
  readonly #stream: StreamItem[] = [];
  /** Second sends not yet made, in the order they are due. */
  readonly #resends: Resend[] = [];
  readonly #open: OpenCall[] = [];
  readonly #announced: AnnouncedJob[];
  #calls = 0;
  #jobsPut = 0;

  constructor(
    options: ScenarioOptions,
    rng: () => number,
    session: () => string,
    now: number,
    jobs: readonly JobItem[],
  ) {
    this.#options = options;
    this.#rng = rng;
    this.#session = session;
    this.#now = now;
    this.#run = `${options.seed}`;
    this.#announced = jobs.filter((j): j is AnnouncedJob => j.kind === "job");
  }

  /** One step: the resends due, the jobs' requested events due, then a poison record or a call's next event. */
  step(step: number): void {
    while (this.#resends.length > 0 && (this.#resends[0] as Resend).due <= step)
      this.#stream.push((this.#resends.shift() as Resend).item);
    const { events } = this.#options;
    for (; this.#jobsPut < Math.floor(((step + 1) * this.#announced.length) / events); this.#jobsPut++) {
      const job = this.#announced[this.#jobsPut] as AnnouncedJob;
      this.#put(step, lifecycleOf(job.callId, job.group, 1, false)[0] as PlannedEvent, `req-${job.callId}`);
    }
    if (this.#rng() < this.#options.poisonRate) {
      const data = POISON_RECORDS[step % POISON_RECORDS.length] as Uint8Array;
      this.#stream.push({ kind: "poison", partitionKey: this.#session(), data });
      return;
    }
    this.#callStep(step);
  }

  /** The stream, with the resends still due at the end. */
  end(): StreamItem[] {
    for (const { item } of this.#resends) this.#stream.push(item);
    return this.#stream;
  }

  /** A new call opened if fewer than eight are under way, then the next event of one of them at random. */
  #callStep(step: number): void {
    const rng = this.#rng;
    if (this.#open.length < 8) {
      const r = rng();
      const length = r < 0.1 ? 1 : r < 0.2 ? 2 : r < 0.7 ? 3 : 4;
      this.#open.push({
        events: lifecycleOf(`call-${this.#run}-${this.#calls}`, this.#session(), length, rng() < 0.15),
        next: 0,
      });
      this.#calls += 1;
    }
    const pick = Math.floor(rng() * this.#open.length);
    const call = this.#open[pick] as OpenCall;
    const event = call.events[call.next] as PlannedEvent;
    const id = `${event.callId.slice("call-".length)}-${event.step}`;
    if (rng() < (this.#options.stuckRate ?? 0)) {
      const round = rng() < (this.#options.stuckTwiceRate ?? 0) ? 2 : 1;
      this.#put(step, event, stuckEventId(round, id), round);
    } else this.#put(step, event, `ev-${id}`);
    call.next += 1;
    if (call.next === call.events.length) this.#open.splice(pick, 1);
  }

  /** The event into the stream (stuck when it has a round to be released at), and maybe its second send. */
  #put(step: number, event: PlannedEvent, eventId: string, releasedAtRound?: number): void {
    const { step: _name, ...fields } = event;
    const data = utf8.encode(
      encodeLifecycleEvent({
        ...fields,
        specVersion: CURRENT_SPEC_VERSION,
        eventId,
        occurredAt: new Date(this.#now + step).toISOString(),
      } as ToolCallLifecycleEvent),
    );
    const item: ValidStreamItem = {
      kind: releasedAtRound === undefined ? "event" : "stuck",
      data,
      partitionKey: event.sessionId,
      callId: event.callId,
      eventId,
      type: event.type,
      ...(releasedAtRound !== undefined ? { releasedAtRound } : {}),
    };
    this.#stream.push(item);
    if (this.#rng() < this.#options.duplicateRate) {
      const due = step + 1 + Math.floor(this.#rng() * 4);
      const at = this.#resends.findIndex((r) => r.due > due);
      this.#resends.splice(at < 0 ? this.#resends.length : at, 0, {
        due,
        item: { ...item, kind: "duplicate" },
      });
    }
  }
}

function jobsFor(
  options: ScenarioOptions,
  rng: () => number,
  session: () => string,
  now: number,
  count: number,
  prefix: string,
): JobItem[] {
  const run = `${options.seed}`;
  return Array.from({ length: count }, (_, i): JobItem => {
    const group = session();
    if (rng() < options.poisonRate) {
      return { kind: "poison", body: POISON_BODIES[i % POISON_BODIES.length] as string, group };
    }
    const callId = `${prefix}-${run}-${i}`;
    const transient = rng() < options.transientRate;
    const big = rng() < 0.02;
    const latencyMs = 5 + Math.floor(rng() * 45);
    const enqueuedAt = now;
    const envelope = {
      specVersion: CURRENT_SPEC_VERSION,
      callId,
      sessionId: group,
      enqueuedAt: new Date(enqueuedAt).toISOString(),
    };
    if (options.downstream) {
      const rejected = rng() < (options.rejectRate ?? 0);
      const asked = {
        latencyMs,
        ...(big ? { resultBytes: 300_000 } : {}),
        ...(transient ? { failFirst: 1 } : {}),
        ...(rejected ? { reject: true } : {}),
      };
      const body = encodeToolCallJob({
        ...envelope,
        tool: "http.request",
        arguments: { path: downstreamPath(callId), method: "POST", body: asked },
      });
      return { kind: "job", body, callId, group, transient, ...(rejected ? { rejected } : {}), enqueuedAt };
    }
    const args = {
      latencyMs,
      ...(big ? { resultBytes: 300_000 } : {}),
      ...(transient ? { failUntilAttempt: 1 } : {}),
    };
    const body = encodeToolCallJob({
      ...envelope,
      tool: i % 5 === 0 ? "text.stats" : "load.latency",
      arguments: i % 5 === 0 ? { text: `job ${i} of run ${run}` } : args,
    });
    return { kind: "job", body, callId, group, transient: i % 5 !== 0 && transient, enqueuedAt };
  });
}
