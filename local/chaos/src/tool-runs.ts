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
 * invocation that held the run (storing the result, recording the outcome), when another invocation may
 * have made the rerun (a worker never reruns a job within one invocation), or that invocation ran out of
 * time (its lease ended with it). A redelivery alone is no cause, nor is a fault on the redelivery's own
 * requests (its pre-read, its claim): a delivery of a job whose outcome is stored must find it and run nothing.
 *
 * The excuses are held tight, so that the check cannot pass by construction: a fault counts only after the
 * earlier run was answered and inside an invocation that held it; a slow invocation (or a cut-off answer,
 * which needs one) only for a run that came after its claim's lease ended and that another invocation
 * may have sent; and a run that came after the job's outcome was stored (the DynamoDB door saw it
 * written) is never excused. Every time here is the harness's own clock at the witness, the doors and the
 * mappings, never what the product reports.
 */
import { Tally } from "./tally.js";
import { RunOutcome, type WitnessEffect, type WitnessRun } from "./witness.js";

export const RunCause = {
  DownstreamFailed: "downstream failed the run",
  AnswerCutOff: "the worker stopped waiting for the answer",
  FaultAfterRun: "a fault hit the job's requests after the run",
  EmulatorFailed: "an emulator failed the job's requests after the run",
  SlowInvocation: "the invocation ran out of time",
} as const;
export type RunCause = (typeof RunCause)[keyof typeof RunCause];

/** Something the harness did to a job, or saw happen to it, at a moment. */
export interface JobIncident {
  readonly at: number;
  readonly cause:
    | typeof RunCause.FaultAfterRun
    | typeof RunCause.EmulatorFailed
    | typeof RunCause.SlowInvocation;
  /** For an invocation: when it started (a run inside it counts from there). */
  readonly from?: number;
  /**
   * For an invocation: how long after its start a claim taken in it has lasted at least (the worker's lease
   * ends when its requests are cut off: the function's timeout less the requests' share of the deadline
   * margin, packages/batch requestDeadlines). Its lease can have ended only that long after its start.
   */
  readonly leaseMs?: number;
}

/**
 * A run as the judge takes it: the witness's, or one read back from a diagnostics file written before the
 * witness measured how early a run can have arrived (no `earliestAt`).
 */
export type JudgedRun = Omit<WitnessRun, "earliestAt"> & { readonly earliestAt?: number | undefined };

export interface JobToJudge {
  readonly callId: string;
  /** The downstream refuses it for good: no effect is right. */
  readonly rejected: boolean;
  readonly runs: readonly JudgedRun[];
  readonly effects: readonly WitnessEffect[];
  readonly incidents: readonly JobIncident[];
  /** The worker invocations the job was handed: when each began and ended. */
  readonly invocations: readonly InvocationWindow[];
  /**
   * When the DynamoDB door first saw the job's outcome written (its call's item left completed or failed),
   * if it did: a delivery after that must find the outcome and run nothing.
   */
  readonly storedAt?: number | undefined;
}

export interface InvocationWindow {
  readonly from: number;
  readonly at: number;
  /** Its request id, as the local runtime named it. */
  readonly requestId?: string | undefined;
  /**
   * The requests for this job that the invocation's sandbox recorded sending to the witness (the local
   * runtime's record, `InvokeResult.requests`): when each was sent and with which key. Absent where there
   * is no record (a diagnostics file written before the sandbox kept it, a test of the inference).
   */
  readonly sent?: readonly SentRun[] | undefined;
}

/** A request for a job's tool as the sending sandbox recorded it. */
export interface SentRun {
  /** When the sandbox wrote its head to the socket (the same clock as the harness's). */
  readonly at: number;
  readonly key: string | undefined;
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
  /**
   * How the sender of each run was known: paired with a request its sandbox recorded (`recorded`, of
   * which `ambiguous` could be paired with the requests of more than one invocation), or, for a run no
   * recorded request can be paired with, inferred from the times (`inferred`).
   */
  readonly senders: { readonly recorded: number; readonly ambiguous: number; readonly inferred: number };
}

/** What the judge made of one run after the first: its cause, or why none was found. */
export interface RerunExplanation {
  /** The run's place among the job's runs (2 for the second). */
  readonly run: number;
  readonly cause: RunCause | undefined;
  /** Why that cause, or why nothing explains the run. */
  readonly why: string;
}

/**
 * The invocations whose window [from, at] meets the run's [earliestAt, receivedAt]. The witness stamps a
 * request when its busy loop reads the head (an upper bound of when it was sent) and measures from its own
 * loop how early it can have arrived (a lower bound, widened by however long the loop was blocked:
 * src/witness.ts `ArrivalBound`); the sender wrote the request while it ran, so its window meets that span
 * however late the harness read it.
 */
function meeting(run: JudgedRun, job: JobToJudge): InvocationWindow[] {
  const earliestAt = run.earliestAt ?? run.receivedAt;
  return mayHaveSent(job).filter((i) => i.from <= run.receivedAt && i.at >= earliestAt);
}

/**
 * The invocations the times may name as a run's sender: all but those whose sandbox's record exists and
 * holds no request for the job. The record holds every request the invocation started and sent before it
 * ended (local/runtime sandbox-worker.mjs), so an empty one proves the invocation sent the job nothing,
 * however its window meets a starved witness's span of a run the records miss (code left running sent it
 * after its invocation ended). An invocation without a record (a diagnostics file written before the
 * record) may still be named.
 */
function mayHaveSent(job: JobToJudge): InvocationWindow[] {
  return job.invocations.filter((i) => !sentNothing(i));
}

function sentNothing(invocation: InvocationWindow): boolean {
  return invocation.sent !== undefined && invocation.sent.length === 0;
}

/**
 * The invocations that may have sent `run`: those whose window meets its span (`meeting`), or, when none
 * does, the last one that ended before it (`lastEndedBefore`). For a run the witness measured, that is all:
 * the guess it replaces, "the last invocation started before the stamp",
 * named the next invocation when a starved harness read a stopped sandbox's request after that one began
 * (fifo-42-2, s38), and added one the bound rules out. A run read back from a diagnostics file written
 * before the witness measured its bound keeps that guess: how late it was read is unknown, and its
 * verdict must not change on a second reading.
 */
function sendersOf(run: JudgedRun, job: JobToJudge, assigned: Assignment): readonly InvocationWindow[] {
  return assigned.get(run) ?? inferredSenders(run, job);
}

/** The senders of a run no recorded request can be paired with, inferred from the times. */
function inferredSenders(run: JudgedRun, job: JobToJudge): InvocationWindow[] {
  const senders = meeting(run, job);
  if (run.earliestAt !== undefined)
    return senders.length > 0 ? senders : lastEndedBefore(run.earliestAt, job);
  const last = latest(
    mayHaveSent(job).filter((i) => i.from <= run.receivedAt),
    (i) => i.from,
  );
  return last && !senders.includes(last) ? [...senders, last] : senders;
}

interface Send {
  readonly invocation: InvocationWindow;
  readonly at: number;
  readonly key: string | undefined;
}

const recordedByJob = new WeakMap<JobToJudge, Map<JudgedRun, InvocationWindow[]>>();

/**
 * The runs of a job whose senders the sandboxes' records tell: each run with the invocations whose
 * recorded request it can be. A run and a request can be one when the request named the job, carried the
 * run's key, and was sent no later than the witness read the run (the same clock). When two invocations sent
 * the job with one key before the witness read either (a slow invocation past its lease and the next
 * delivery, read by a starved witness), the times cannot say which request is which run: the pairing that
 * gives every run a request is then not unique, and a run is given every invocation whose request it is
 * paired with in some such pairing (a maximum matching of runs to requests: Kuhn's augmenting paths, on a
 * job's few runs). A request with no run is allowed (one cut before it reached the witness). A run that some
 * such pairing leaves without a request (the runs outnumber the requests they can be: a request the
 * records miss), or a job without records, is left out: its senders are inferred.
 */
function recordedSenders(job: JobToJudge): Map<JudgedRun, InvocationWindow[]> {
  const known = recordedByJob.get(job);
  if (known) return known;
  const senders = new Map<JudgedRun, InvocationWindow[]>();
  recordedByJob.set(job, senders);
  const { sends, fits, all, best } = pairing(job);
  if (sends.length === 0) return senders;
  for (const [r, run] of job.runs.entries()) {
    const others = all.filter((o) => o !== r);
    // Paired in every maximum pairing, or the request it may lack is one the records missed.
    if (matchingSize(others, sends.length, fits, -1) !== best - 1) continue;
    const found = new Set<InvocationWindow>();
    for (let s = 0; s < sends.length; s++) {
      if (!fits(r, s) || found.has((sends[s] as Send).invocation)) continue;
      if (matchingSize(others, sends.length, fits, s) === best - 1) found.add((sends[s] as Send).invocation);
    }
    if (found.size > 0) senders.set(run, [...found]);
  }
  return senders;
}

/** A job's recorded requests, which of its runs each can be (`fits`), and a maximum matching's size. */
function pairing(job: JobToJudge): {
  sends: Send[];
  fits: (run: number, send: number) => boolean;
  all: number[];
  best: number;
} {
  const sends: Send[] = job.invocations.flatMap((invocation) =>
    (invocation.sent ?? []).map((s) => ({ invocation, at: s.at, key: s.key })),
  );
  const fits = (r: number, s: number) => {
    const run = job.runs[r] as JudgedRun;
    const send = sends[s] as Send;
    return send.key === run.key && send.at <= run.receivedAt;
  };
  const all = job.runs.map((_, r) => r);
  return { sends, fits, all, best: sends.length === 0 ? 0 : matchingSize(all, sends.length, fits, -1) };
}

/**
 * The senders the judge takes for the runs the records pair (`recordedSenders`): one invocation each, as
 * one maximum matching of runs to requests pairs them, or, past `ASSIGNMENTS` of them, every invocation
 * each run can be paired with. Runs left out are inferred from the times.
 */
type Assignment = ReadonlyMap<JudgedRun, readonly InvocationWindow[]>;

/**
 * How many consistent assignments of a job's runs to invocations the judge weighs at most: a job's few
 * runs and invocations give a handful; past that it falls back to each run's senders alone (the union
 * over pairings), which can excuse more, never less, so a correct worker is still never caught.
 */
const ASSIGNMENTS = 4_096;

const assignmentsByJob = new WeakMap<JobToJudge, readonly Assignment[]>();

/**
 * Every way of naming one sender for each run the records pair that some maximum matching of runs to
 * requests makes (two by the same invocation count once). The reruns are judged over one of them at a
 * time, never over each run's senders taken alone: those can excuse the reruns of an invocation that ran
 * the tool twice by a slow one, each pairing excusing one rerun and catching the other (test "catches an
 * invocation that ran the tool twice when a late read lets each run alone be any request"). The true
 * pairing is one of them (every run is paired with its own request in it), so judging by the assignment
 * that explains the most never blames a correct worker.
 */
function assignments(job: JobToJudge): readonly Assignment[] {
  const known = assignmentsByJob.get(job);
  if (known) return known;
  const recorded = recordedSenders(job);
  const { sends, fits, all, best } = pairing(job);
  const paired = all.filter((r) => recorded.has(job.runs[r] as JudgedRun));
  const chosen = new Map<number, InvocationWindow>();
  const found: Assignment[] = [];
  let truncated = false;
  const consistent = () =>
    matchingSize(
      all,
      sends.length,
      (r, s) =>
        fits(r, s) && (chosen.get(r) ?? (sends[s] as Send).invocation) === (sends[s] as Send).invocation,
      -1,
    ) === best;
  const walk = (k: number): void => {
    if (truncated) return;
    if (k === paired.length) {
      if (found.length === ASSIGNMENTS) truncated = true;
      else
        found.push(
          new Map(paired.map((r) => [job.runs[r] as JudgedRun, [chosen.get(r) as InvocationWindow]])),
        );
      return;
    }
    const r = paired[k] as number;
    for (const invocation of recorded.get(job.runs[r] as JudgedRun) ?? []) {
      chosen.set(r, invocation);
      if (consistent()) walk(k + 1);
      chosen.delete(r);
    }
  };
  walk(0);
  const result = truncated || found.length === 0 ? [recorded] : found;
  assignmentsByJob.set(job, result);
  return result;
}

/** The size of a maximum matching of `runs` to the sends (all but `without`) along `fits`. */
function matchingSize(
  runs: readonly number[],
  sends: number,
  fits: (run: number, send: number) => boolean,
  without: number,
): number {
  const owner = new Array<number>(sends).fill(-1);
  const augment = (r: number, seen: boolean[]): boolean => {
    for (let s = 0; s < sends; s++) {
      if (s === without || seen[s] || !fits(r, s)) continue;
      seen[s] = true;
      if (owner[s] === -1 || augment(owner[s] as number, seen)) {
        owner[s] = r;
        return true;
      }
    }
    return false;
  };
  return runs.filter((r) => augment(r, new Array<boolean>(sends).fill(false))).length;
}

/**
 * A run whose span meets no invocation was still sent by one: loopback delivery lags on a loaded machine
 * (the kernel defers its network processing), so a stopped sandbox's request can reach the witness after
 * its thread had exited and before the next invocation began (job-42-20, s38). Its sender is the last
 * invocation that ended before the span. Only then: a span that meets an invocation is that one's, so a
 * worker's own hang-up and rerun inside one invocation never borrows an earlier slow one's excuse.
 */
function lastEndedBefore(earliestAt: number, job: JobToJudge): InvocationWindow[] {
  const last = latest(
    mayHaveSent(job).filter((i) => i.at < earliestAt),
    (i) => i.at,
  );
  return last ? [last] : [];
}

/** The window with the greatest `time` (the first of equals), if any. */
function latest(
  windows: readonly InvocationWindow[],
  time: (window: InvocationWindow) => number,
): InvocationWindow | undefined {
  return windows.reduce<InvocationWindow | undefined>(
    (a, i) => (a === undefined || time(i) > time(a) ? i : a),
    undefined,
  );
}

/**
 * Whether an invocation other than `slow` (one that ran out of time) may have sent `run`. Its lease or its
 * deadline lets another delivery run the tool again; it lets the invocation itself do nothing more: its
 * requests are cut off with its lease (packages/worker process-jobs), and a worker runs a job's tool once per
 * invocation, its retries are SQS's (§2.3). A run only it can have sent is one it chose to make.
 *
 * `runningAt`: when the other may have sent it at the earliest (the slow one's lease ended: before, its
 * claim held every other delivery back). One that had ended by then cannot have sent it, however wide a
 * starved witness made the run's span (test: "does not excuse a run after a slow invocation's lease by
 * another invocation that ended before the lease did").
 */
function sentByAnother(
  run: JudgedRun,
  slow: { from: number; at: number },
  job: JobToJudge,
  assigned: Assignment,
  runningAt = Number.NEGATIVE_INFINITY,
): boolean {
  return sendersOf(run, job, assigned).some(
    (i) => (i.from !== slow.from || i.at !== slow.at) && i.at >= runningAt,
  );
}

/**
 * The invocations that may have cut a run off: a client leaves before its answer when the worker's deadline
 * cut its requests off or its sandbox was stopped at its timeout, and either makes the invocation a slow one
 * (the observer's SlowInvocation incident). The run was sent by one of its senders (`sendersOf`), whichever
 * of them was slow. A worker that hangs up on its tool for no deadline of its own finds no such invocation:
 * its rerun stays without a cause.
 */
function cutOffBy(before: JudgedRun, job: JobToJudge, assigned: Assignment): InvocationWindow[] {
  return sendersOf(before, job, assigned).filter((i) =>
    job.incidents.some(
      (incident) =>
        incident.cause === RunCause.SlowInvocation && incident.from === i.from && incident.at === i.at,
    ),
  );
}

/**
 * The cause of `run` following `before`, if the harness saw one, and why, with the runs' senders as the
 * judge takes them for the job (`explainReruns`: the assignment that explains the most of its reruns).
 */
export function explainRerun(
  before: JudgedRun,
  run: JudgedRun,
  job: JobToJudge,
): Omit<RerunExplanation, "run"> {
  return explainWith(before, run, job, bestAssignment(job).assigned);
}

/** The cause of `run` following `before`, with the runs' senders named by `assigned`. */
function explainWith(
  before: JudgedRun,
  run: JudgedRun,
  job: JobToJudge,
  assigned: Assignment,
): Omit<RerunExplanation, "run"> {
  // The outcome was stored before this run came: the worker that ran it should have found it, whatever
  // happened to the earlier run (issue 24, defect 1: a read taken before the claim was trusted).
  if (job.storedAt !== undefined && job.storedAt <= run.receivedAt)
    return {
      cause: undefined,
      why: `the job's outcome was stored at ${job.storedAt}, before this run at ${run.receivedAt}`,
    };
  if (before.outcome === RunOutcome.Failed)
    return { cause: RunCause.DownstreamFailed, why: "the run before was answered 503" };
  // The invocation that held the earlier run: the one whose sandbox recorded sending it. For a run no
  // record pairs with, those whose window meets its span (a run without a measured bound: those running
  // when it was read, as before the bound), which a starved witness can widen to a later delivery.
  const recorded = assigned.get(before);
  const holders = recorded ?? meeting(before, job);
  if (before.clientGone) {
    // When the witness was too starved to tell which invocation sent the earlier run, any slow one that may
    // have sent it will do, as long as another may have sent this run.
    const cutBy = cutOffBy(before, job, assigned).find((slow) => sentByAnother(run, slow, job, assigned));
    if (cutBy)
      return {
        cause: RunCause.AnswerCutOff,
        why: `the client of the run before left before its answer, sent by the invocation ${cutBy.from}..${cutBy.at}, which ran out of time`,
      };
  }
  const answeredAt = before.answeredAt;
  for (const incident of job.incidents) {
    // A fault (injected, or an emulator's own) explains the rerun only if it hit a request made after the
    // earlier run was answered (storing its result, recording its outcome), inside an invocation that held
    // that run, and before this run: a fault on a redelivery's own requests (its pre-read, its claim) cannot
    // have kept the earlier run's outcome from being stored. And only for a run another invocation may have
    // sent: the worker never runs a job's tool again within one invocation, it reports the failure and
    // leaves the retry to SQS's redelivery (§2.3), so a rerun only the faulted invocation can have sent is
    // one it chose to make (as for a slow invocation, `sentByAnother`).
    if (
      (incident.cause === RunCause.FaultAfterRun || incident.cause === RunCause.EmulatorFailed) &&
      answeredAt !== undefined &&
      incident.at >= answeredAt &&
      incident.at <= run.receivedAt &&
      holders.some(
        (i) => i.from <= incident.at && incident.at <= i.at && sentByAnother(run, i, job, assigned),
      )
    )
      return {
        cause: incident.cause,
        why: `at ${incident.at}, after the run before was answered at ${answeredAt}, inside an invocation that held it`,
      };
    // An invocation that held the earlier run and ran out of time explains it only if this run came after
    // its claim's lease ended: before, the claim kept every other delivery from running the tool. Whether
    // the invocation itself lasted that long does not matter: one that stopped in its deadline margin with
    // the run answered and its outcome not stored leaves the claim to end with its lease (100,000 events,
    // seed 42: ended 2,805 ms after its call, lease 2,850 ms, rerun at 2,947 ms).
    const from = incident.from ?? incident.at;
    if (
      incident.cause === RunCause.SlowInvocation &&
      incident.leaseMs !== undefined &&
      (recorded
        ? recorded.some((i) => i.from === from && i.at === incident.at)
        : from <= before.receivedAt &&
          incident.at >= (before.earliestAt ?? before.receivedAt) &&
          !job.invocations.some((i) => i.from === from && i.at === incident.at && sentNothing(i))) &&
      run.receivedAt - from >= incident.leaseMs &&
      sentByAnother(run, { from, at: incident.at }, job, assigned, from + incident.leaseMs)
    )
      return {
        cause: incident.cause,
        why: `the invocation ${from}..${incident.at} held the run before and ran out of time; this run came after its lease (${incident.leaseMs} ms) ended`,
      };
  }
  return {
    cause: undefined,
    why: `no failure of the run before, no fault after its answer inside an invocation that held it, no invocation out of time whose lease had ended and another may have made this run (${job.incidents.length} incidents, ${holders.length} holding invocations)`,
  };
}

/** How the judge took a run's sender: the invocations (their places in `job.invocations`) and how known. */
export interface RunSender {
  readonly invocations: readonly number[];
  readonly known: "recorded" | "inferred";
}

/** The sender of each of a job's runs, as the judge takes it. */
export function runSenders(job: JobToJudge): RunSender[] {
  const recorded = recordedSenders(job);
  return job.runs.map((run) => {
    const by = recorded.get(run);
    const invocations = by ?? inferredSenders(run, job);
    return {
      invocations: invocations.map((i) => job.invocations.indexOf(i)),
      known: by ? "recorded" : "inferred",
    };
  });
}

/** Each run after the first of a job, with what explains it. */
export function explainReruns(job: JobToJudge): RerunExplanation[] {
  return bestAssignment(job).reruns;
}

/**
 * The assignment of senders (`assignments`) under which the fewest of the job's reruns lack a cause (the
 * first of equals), with the explanations it gives.
 */
function bestAssignment(job: JobToJudge): { assigned: Assignment; reruns: RerunExplanation[] } {
  let best: { assigned: Assignment; reruns: RerunExplanation[]; unexplained: number } | undefined;
  for (const assigned of assignments(job)) {
    const reruns = job.runs.flatMap((run, i) =>
      i === 0 ? [] : [{ run: i + 1, ...explainWith(job.runs[i - 1] as JudgedRun, run, job, assigned) }],
    );
    const unexplained = reruns.filter((r) => r.cause === undefined).length;
    if (best === undefined || unexplained < best.unexplained) best = { assigned, reruns, unexplained };
    if (unexplained === 0) break;
  }
  return best as { assigned: Assignment; reruns: RerunExplanation[] };
}

export function judgeToolRuns(jobs: readonly JobToJudge[], limit = 5): ToolRunVerdict {
  const causes = Object.fromEntries(Object.values(RunCause).map((c) => [c, 0])) as Record<RunCause, number>;
  const unexplained = new Tally(limit);
  const wrongEffects = new Tally(limit);
  const keyProblems = new Tally(limit);
  let runs = 0;
  let maxRuns = 0;
  let rerun = 0;
  const senders = { recorded: 0, ambiguous: 0, inferred: 0 };
  for (const job of jobs) {
    const recorded = recordedSenders(job);
    for (const run of job.runs) {
      const by = recorded.get(run);
      if (by === undefined) senders.inferred += 1;
      else {
        senders.recorded += 1;
        if (by.length > 1) senders.ambiguous += 1;
      }
    }
    runs += job.runs.length;
    maxRuns = Math.max(maxRuns, job.runs.length);
    if (job.runs.length > 1) rerun += 1;
    const want = job.rejected ? 0 : 1;
    if (job.effects.length !== want)
      wrongEffects.add(`${job.callId}: ${job.effects.length} effects, expected ${want}`);
    const keys = new Set(job.runs.map((r) => r.key ?? "(none)"));
    if (keys.size > 1 || keys.has("(none)")) keyProblems.add(`${job.callId}: keys ${[...keys].join(", ")}`);
    for (const { run, cause } of explainReruns(job)) {
      if (cause) causes[cause] += 1;
      else unexplained.add(`${job.callId} run ${run}`);
    }
  }
  return { jobs: jobs.length, runs, maxRuns, rerun, causes, unexplained, wrongEffects, keyProblems, senders };
}
