/**
 * What an operator needs to see why a job's tool ran more than once: the job's runs as the witness saw
 * them, the invocations it was handed, the incidents the harness recorded for it, when its outcome was
 * stored, and which cause the judge chose for each run after the first (or why it found none). Written by
 * `npm run chaos -- --diagnostics FILE` for the jobs run more than once, printed by `--explain JOB_ID`.
 * Every time is the harness's own clock (ms since the epoch); the timeline prints them from the job's
 * first moment.
 */
import {
  explainReruns,
  type InvocationWindow,
  type JobIncident,
  type JobToJudge,
  type RerunExplanation,
  runSenders,
} from "./tool-runs.js";
import type { WitnessRun } from "./witness.js";

export interface JobDiagnostics {
  readonly callId: string;
  readonly rejected: boolean;
  readonly storedAt: number | undefined;
  readonly runs: readonly RunView[];
  readonly effects: number;
  /** With, from the sandboxes' records (absent from older files), the requests each sent for the job. */
  readonly invocations: readonly InvocationWindow[];
  readonly incidents: readonly JobIncident[];
  readonly reruns: readonly RerunExplanation[];
}

type RunView = Pick<
  WitnessRun,
  "key" | "receivedAt" | "answeredAt" | "outcome" | "effectId" | "clientGone"
> & {
  /**
   * How early the run can have reached the witness (WitnessRun.earliestAt), so that a later reader can judge
   * the run again. Absent from files written before the witness measured it: read it as `receivedAt`.
   */
  readonly earliestAt?: number | undefined;
  /**
   * The invocations (1 for the first of `invocations`) the judge took to have sent the run, and whether a
   * sandbox's record of the request said so or the times were all it had. Absent from older files.
   */
  readonly sentBy?: { readonly invocations: readonly number[]; readonly known: "recorded" | "inferred" };
};

/** A job call id of the scenario (`job-<seed>-<n>` or `fifo-<seed>-<n>`): what --explain takes. */
export const JOB_ID = /^(?:job|fifo)-\d+-\d+$/;

export function diagnose(job: JobToJudge): JobDiagnostics {
  const senders = runSenders(job);
  return {
    callId: job.callId,
    rejected: job.rejected,
    storedAt: job.storedAt,
    runs: job.runs.map((r, i) => ({
      key: r.key,
      earliestAt: r.earliestAt,
      receivedAt: r.receivedAt,
      answeredAt: r.answeredAt,
      outcome: r.outcome,
      effectId: r.effectId,
      clientGone: r.clientGone,
      ...(senders[i]
        ? {
            sentBy: {
              invocations: senders[i].invocations.map((n) => n + 1),
              known: senders[i].known,
            },
          }
        : {}),
    })),
    effects: job.effects.length,
    invocations: job.invocations.map((i) => ({
      from: i.from,
      at: i.at,
      ...(i.requestId !== undefined ? { requestId: i.requestId } : {}),
      ...(i.sent !== undefined ? { sent: i.sent } : {}),
    })),
    incidents: job.incidents,
    reruns: explainReruns(job),
  };
}

/** The file --diagnostics writes: the run's seed and the diagnostics of the jobs asked for. */
export interface DiagnosticsFile {
  readonly seed: number;
  readonly jobs: readonly JobDiagnostics[];
}

/** A diagnostics file that cannot be read as one: the message says what is wrong with it. */
export class DiagnosticsFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DiagnosticsFileError";
  }
}

const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * Reads a file --diagnostics wrote. Checked as far as the timeline relies on it (a hand-edited or truncated
 * file is refused with what is wrong, never printed as a timeline that means nothing).
 */
export function readDiagnostics(text: string): DiagnosticsFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new DiagnosticsFileError(`not JSON: ${(error as Error).message}`);
  }
  if (!isObject(value) || !isNumber(value.seed) || !Array.isArray(value.jobs))
    throw new DiagnosticsFileError('not a diagnostics file: expected { "seed": N, "jobs": [...] }');
  value.jobs.forEach((job: unknown, i) => {
    const ok =
      isObject(job) &&
      typeof job.callId === "string" &&
      Array.isArray(job.runs) &&
      job.runs.every(
        (r: unknown) =>
          isObject(r) && isNumber(r.receivedAt) && (r.earliestAt === undefined || isNumber(r.earliestAt)),
      ) &&
      Array.isArray(job.invocations) &&
      job.invocations.every(
        (w: unknown) =>
          isObject(w) &&
          isNumber(w.from) &&
          isNumber(w.at) &&
          (w.sent === undefined ||
            (Array.isArray(w.sent) && w.sent.every((x: unknown) => isObject(x) && isNumber(x.at)))),
      ) &&
      Array.isArray(job.incidents) &&
      job.incidents.every((x: unknown) => isObject(x) && isNumber(x.at) && typeof x.cause === "string") &&
      Array.isArray(job.reruns);
    if (!ok) throw new DiagnosticsFileError(`jobs[${i}] is not a job's diagnostics`);
  });
  return value as unknown as DiagnosticsFile;
}

/**
 * One job's timeline, one moment a line, in time order, from the job's first moment (+ms): each
 * invocation's start and end, each run's arrival and answer, each incident, the outcome stored; then the
 * cause chosen for each run after the first.
 */
export function formatTimeline(job: JobDiagnostics): string {
  const firsts = [
    ...job.invocations.map((w) => w.from),
    ...job.runs.map((r) => r.earliestAt ?? r.receivedAt),
    ...job.incidents.map((x) => x.from ?? x.at),
    ...(job.storedAt !== undefined ? [job.storedAt] : []),
  ];
  const origin = firsts.length > 0 ? Math.min(...firsts) : 0;
  const moments: { at: number; order: number; text: string }[] = [];
  const add = (at: number | undefined, order: number, text: string) => {
    if (at !== undefined) moments.push({ at, order, text });
  };
  job.invocations.forEach((w, i) => {
    add(w.from, 0, `invocation ${i + 1} starts`);
    add(w.at, 3, `invocation ${i + 1} ends (${w.at - w.from} ms)`);
    for (const s of w.sent ?? [])
      add(
        s.at,
        0,
        `invocation ${i + 1} sends the job's request (key ${s.key ?? "(none)"}; its sandbox's record)`,
      );
  });
  job.runs.forEach((r, i) => {
    // When the witness's loop was busy, the run may have been sent well before it was read.
    const sentFrom =
      r.earliestAt !== undefined && r.earliestAt < r.receivedAt
        ? `; sent no earlier than +${r.earliestAt - origin}`
        : "";
    const by = r.sentBy
      ? `; sent by invocation ${r.sentBy.invocations.join(" or ")}, ${r.sentBy.known === "recorded" ? "as its sandbox recorded" : "inferred from the times"}`
      : "";
    add(r.receivedAt, 1, `run ${i + 1} received (key ${r.key ?? "(none)"}${sentFrom}${by})`);
    add(
      r.answeredAt,
      2,
      `run ${i + 1} answered: ${r.outcome ?? "no outcome"}${r.effectId ? ` ${r.effectId}` : ""}${r.clientGone ? ", client gone" : ""}`,
    );
    if (r.answeredAt === undefined)
      add(r.receivedAt, 2, `run ${i + 1} never answered${r.clientGone ? ": client gone" : ""}`);
  });
  for (const x of job.incidents)
    add(
      x.at,
      2,
      `incident: ${x.cause}${x.from !== undefined ? ` (invocation from +${x.from - origin})` : ""}${x.leaseMs !== undefined ? `, lease ${x.leaseMs} ms` : ""}`,
    );
  add(job.storedAt, 2, "outcome stored (the DynamoDB door saw the item written completed or failed)");
  moments.sort((a, b) => a.at - b.at || a.order - b.order);
  const width = Math.max(1, ...moments.map((m) => String(m.at - origin).length));
  const lines = [
    `job ${job.callId}${job.rejected ? " (refused by the downstream for good)" : ""}: ${job.runs.length} runs, ${job.effects} effects; times in ms from ${new Date(origin).toISOString()}`,
    ...moments.map((m) => `  +${String(m.at - origin).padStart(width)}  ${m.text}`),
    ...job.reruns.map(
      (r) => `run ${r.run}: ${r.cause === undefined ? "UNEXPLAINED" : `cause: ${r.cause}`} (${r.why})`,
    ),
  ];
  if (job.reruns.length === 0) lines.push("no run after the first: nothing to explain");
  return lines.join("\n");
}
