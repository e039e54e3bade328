/**
 * The verdict on the tools' runs, from the witness (what the downstream really received and applied) and
 * from what the harness itself did to each job (the doors' faults, the witness's failures, invocations
 * that ran out of time), never from the product's bookkeeping.
 *
 * A job's tool may run more than once: a worker cannot know whether a run whose outcome it failed to
 * store happened, so the next delivery runs it again (that is why the run carries the same idempotency
 * key, which the downstream honours). Each run after the first must therefore have a cause that could
 * have kept the run before it from storing its outcome: the downstream failed that run, the worker gave up
 * waiting for its answer (its deadline), a fault hit a request for that job after the run, made by the
 * invocation that held the run (storing the result, recording the outcome), or that invocation ran out of
 * time (its lease ended with it). A redelivery alone is no cause, nor is a fault on the redelivery's own
 * requests (its pre-read, its claim): a delivery of a job whose outcome is stored must find it and run nothing.
 */
import { Tally } from "./tally.js";
import { RunOutcome, type WitnessEffect, type WitnessRun } from "./witness.js";

export const RunCause = {
  DownstreamFailed: "downstream failed the run",
  AnswerCutOff: "the worker stopped waiting for the answer",
  FaultAfterRun: "a fault hit the job's requests after the run",
  SlowInvocation: "the invocation ran out of time",
} as const;
export type RunCause = (typeof RunCause)[keyof typeof RunCause];

/** Something the harness did to a job, or saw happen to it, at a moment. */
export interface JobIncident {
  readonly at: number;
  readonly cause: typeof RunCause.FaultAfterRun | typeof RunCause.SlowInvocation;
  /** For an invocation: when it started (a run inside it counts from there). */
  readonly from?: number;
}

export interface JobToJudge {
  readonly callId: string;
  /** The downstream refuses it for good: no effect is right. */
  readonly rejected: boolean;
  readonly runs: readonly WitnessRun[];
  readonly effects: readonly WitnessEffect[];
  readonly incidents: readonly JobIncident[];
  /** The worker invocations the job was handed: when each began and ended. */
  readonly invocations: readonly InvocationWindow[];
}

export interface InvocationWindow {
  readonly from: number;
  readonly at: number;
}

export interface ToolRunVerdict {
  readonly jobs: number;
  readonly runs: number;
  readonly maxRuns: number;
  /** Jobs whose tool ran more than once, and how many of their second (or later) runs each cause explains. */
  readonly rerun: number;
  readonly causes: Readonly<Record<RunCause, number>>;
  /** Runs after the first with no cause. */
  readonly unexplained: Tally;
  /** Jobs with a number of effects other than one (none for a refused job). */
  readonly wrongEffects: Tally;
  /** Jobs whose runs did not all carry one and the same idempotency key. */
  readonly keyProblems: Tally;
}

/** The cause of `run` following `before`, if the harness saw one. */
function causeOf(before: WitnessRun, run: WitnessRun, job: JobToJudge): RunCause | undefined {
  if (before.outcome === RunOutcome.Failed) return RunCause.DownstreamFailed;
  if (before.clientGone) return RunCause.AnswerCutOff;
  // The invocations that may have held the earlier run: handed the job before it, still running at it.
  const holders = job.invocations.filter((i) => i.from <= before.receivedAt && i.at >= before.receivedAt);
  for (const incident of job.incidents) {
    const from = incident.from ?? incident.at;
    // A fault after the earlier run, on a request of an invocation that held it; or an invocation that
    // held the earlier run and ran out of time.
    if (
      incident.cause === RunCause.FaultAfterRun &&
      incident.at >= before.receivedAt &&
      incident.at <= run.receivedAt &&
      holders.some((i) => incident.at <= i.at)
    )
      return incident.cause;
    if (
      incident.cause === RunCause.SlowInvocation &&
      from <= before.receivedAt &&
      incident.at >= before.receivedAt
    )
      return incident.cause;
  }
  return undefined;
}

export function judgeToolRuns(jobs: readonly JobToJudge[], limit = 5): ToolRunVerdict {
  const causes = Object.fromEntries(Object.values(RunCause).map((c) => [c, 0])) as Record<RunCause, number>;
  const unexplained = new Tally(limit);
  const wrongEffects = new Tally(limit);
  const keyProblems = new Tally(limit);
  let runs = 0;
  let maxRuns = 0;
  let rerun = 0;
  for (const job of jobs) {
    runs += job.runs.length;
    maxRuns = Math.max(maxRuns, job.runs.length);
    if (job.runs.length > 1) rerun += 1;
    const want = job.rejected ? 0 : 1;
    if (job.effects.length !== want)
      wrongEffects.add(`${job.callId}: ${job.effects.length} effects, expected ${want}`);
    const keys = new Set(job.runs.map((r) => r.key ?? "(none)"));
    if (keys.size > 1 || keys.has("(none)")) keyProblems.add(`${job.callId}: keys ${[...keys].join(", ")}`);
    job.runs.forEach((run, i) => {
      if (i === 0) return;
      const cause = causeOf(job.runs[i - 1] as WitnessRun, run, job);
      if (cause) causes[cause] += 1;
      else unexplained.add(`${job.callId} run ${i + 1}`);
    });
  }
  return { jobs: jobs.length, runs, maxRuns, rerun, causes, unexplained, wrongEffects, keyProblems };
}
