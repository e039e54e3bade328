/**
 * One chaos run, in its steps: stand the harness up (harness.ts), produce the workload paced with the
 * reshard and the SQS restart in the middle (produce.ts), wait until every input is accounted for
 * (settle.ts), recover as an operator would with the faults still on (recover.ts), read the end state
 * (final-state.ts) and judge (verdict.ts).
 */
import type { PartialSplitAccounting, PartialSplits } from "@mcp-pipeline/local-runtime";
import { replayQuarantine } from "@mcp-pipeline/recovery";
import type { EnvironmentSettings } from "@mcp-pipeline/settings";
import type { JobDiagnostics } from "./diagnostics.js";
import type { DoorCounts } from "./doors.js";
import { readFinalState } from "./final-state.js";
import { type Harness, startHarness } from "./harness.js";
import type { InvocationFaultCounts } from "./injector.js";
import { Ledger } from "./ledger.js";
import type { FaultPlan } from "./plan.js";
import { type Production, produce } from "./produce.js";
import { type Recovery, type Replay, type RoundTimes, recover } from "./recover.js";
import type { ReshardStep } from "./reshard.js";
import { type RunClock, Settled, settle } from "./settle.js";
import { type ProductionSummary, ProductionTimeline } from "./timeline.js";
import { type Check, judge, type StallBounds, type Verdict } from "./verdict.js";
import { type TimeoutCause, Watchdog } from "./watchdog.js";

export interface RunOptions {
  readonly settings: EnvironmentSettings;
  readonly timeScale: number;
  readonly timeoutMs: number;
  /**
   * Give up sooner when nothing has moved for this long: no record delivered, no function invoked, no
   * message dead-lettered. Absent: only `timeoutMs` ends a run that does not finish.
   */
  readonly stallTimeoutMs?: number;
  readonly distDir: string;
  readonly onProgress?: (line: string) => void;
  /** The functions' warning and error logs. */
  readonly onLog?: (functionName: string, line: string) => void;
  /** The operator's replay (the product's, by default): test/sabotage.test.ts gives one that skips. */
  readonly replay?: Replay;
  /** The Kinesis mapping's accounting of a bisect-on partial split (§1.4); the local ESM's default when absent. */
  readonly partialSplitAccounting?: PartialSplitAccounting;
  /** The stall bounds' margin for a loaded machine (STALL_MARGIN_MS); a sabotage test sets 0. */
  readonly stallMarginMs?: number;
  /** A job whose diagnostics to keep whatever its runs (--explain JOB_ID). */
  readonly explain?: string | undefined;
  /** Record the production phase's timeline (--timeline FILE): the result's `production`. */
  readonly recordTimeline?: boolean;
}

/** Where a run's wall time went (ms), step by step: what a proof at scale is slow at. */
export interface RunPhases {
  /** The emulators, the doors, the witness and the pipeline started, before the first record is put. */
  readonly startMs: number;
  /** Production: every chunk put (paced on the processor), with the reshard and the SQS restart. */
  readonly productionMs: number;
  /** Until every input was accounted for, the pipeline idle, or the run out of time. */
  readonly settleMs: number;
  /** The operator's recovery, round by round (none when the run ran out of time before it). */
  readonly rounds: readonly RoundTimes[];
  /** The pipeline stopped, the end state read, every check judged. */
  readonly judgeMs: number;
}

export interface ChaosResult {
  readonly seed: number;
  readonly durationMs: number;
  readonly phases: RunPhases;
  readonly timedOut: boolean;
  /** Why the run stopped waiting, when it timed out: the deadline, or nothing moved for `quietMs`. */
  readonly timeout: { readonly cause: TimeoutCause; readonly quietMs: number } | undefined;
  readonly pass: boolean;
  readonly checks: readonly Check[];
  readonly counts: ReturnType<Ledger["counts"]>;
  /** With bisect on, whether a partial answer's split used a retry (§1.4, undocumented); null: no split. */
  readonly partialSplits: PartialSplits;
  readonly proof: {
    readonly toolRuns: number;
    readonly maxRunsPerJob: number;
    readonly jobsRunMoreThanOnce: number;
    /**
     * How the sender of each run the witness received was known: paired with a request a sandbox recorded
     * (`ambiguous`: with those of two or more invocations), or inferred from the times (none paired).
     */
    readonly runSenders: { readonly recorded: number; readonly ambiguous: number; readonly inferred: number };
    readonly witnessEffects: number;
    readonly oracleMismatches: number;
    readonly effectOrderViolations: number;
    readonly replayRounds: number;
    readonly replayPhaseFaults: number;
    readonly givenUpAgainAfterReplay: number;
  };
  readonly faults: DoorCounts &
    InvocationFaultCounts & {
      stuckWriteRefusals: number;
      sqsRefusedConnections: number;
      sqsDownMs: number;
      replayedRecords: number;
      redrivenJobs: number;
    };
  readonly reshard: readonly ReshardStep[];
  readonly bounds: StallBounds;
  /** What was still in flight when the run timed out (empty otherwise). */
  readonly inFlight: readonly string[];
  /** The checks of the product that failed (a run out of time fails those judged at any time). */
  readonly productFailures: readonly string[];
  /** Why each job run more than once ran again (and the job --explain named): --diagnostics, --explain. */
  readonly diagnostics: readonly JobDiagnostics[];
  /** The production phase's timeline, when recorded (`recordTimeline`). */
  readonly timeline?: ProductionSummary;
}

export const RunVerdict = { Pass: "pass", Fail: "fail", TimedOut: "timed out" } as const;
export type RunVerdict = (typeof RunVerdict)[keyof typeof RunVerdict];

/**
 * A run out of time is "timed out" only when no check of the product failed: a job's second effect, a
 * second run without a cause, or events applied out of order are failures seen on the way, not slowness,
 * and must not be read as a machine too slow for the run.
 */
export function verdictOf(result: Pick<ChaosResult, "pass" | "timedOut" | "productFailures">): RunVerdict {
  if (result.timedOut) return result.productFailures.length > 0 ? RunVerdict.Fail : RunVerdict.TimedOut;
  return result.pass ? RunVerdict.Pass : RunVerdict.Fail;
}

/** What a loaded machine may add to a stall, on top of what the settings allow. */
export const STALL_MARGIN_MS = 30_000;

/**
 * The stall bounds, from the settings: a key waits at most for its batch's attempts (retries + 1, each
 * at most a function timeout, with bisection's halves, §1.3) and the SQS outage; a group for a message's
 * receives (each failed one costs a visibility timeout, §2.3, §3) and the outage. Plus a margin for a
 * loaded machine, stated here rather than hidden.
 */
export function stallBounds(
  settings: EnvironmentSettings,
  timeScale: number,
  outageMs: number,
  margin = STALL_MARGIN_MS,
): StallBounds {
  const p = settings.processor;
  const fifo = settings.fifo_worker;
  return {
    partitionKeyMs: Math.round(
      ((p.esm.maximum_retry_attempts + 1) * 2 * p.timeout_seconds * 1000) / timeScale + outageMs + margin,
    ),
    groupMs: Math.round(
      (fifo.queue.max_receive_count * fifo.queue.visibility_timeout_seconds * 1000) / timeScale +
        outageMs +
        margin,
    ),
  };
}

/** A run whose plan asked for a fault that never happened has not shown what it claims to. */
export function faultsExercised(
  plan: FaultPlan,
  happened: Record<keyof FaultPlan["options"]["rates"], number>,
): Check {
  const missing = (Object.keys(happened) as (keyof typeof happened)[]).filter(
    (kind) => plan.options.rates[kind] > 0 && happened[kind] === 0,
  );
  return {
    name: "every fault kind asked for happened",
    pass: missing.length === 0,
    detail:
      missing.length === 0 ? "yes" : `never happened: ${missing.join(", ")} (a longer run or a higher rate)`,
  };
}

/**
 * The run did what a chaos run claims: faults while replaying and redriving, and (when the plan stuck
 * events through their first replay) a record given up again after its replay and then applied.
 */
export function recoveryUnderFaults(
  plan: FaultPlan,
  replayPhaseFaults: number,
  givenUpAgain: number,
  rounds: number,
): Check {
  const twice = plan.scenario.stream.some((s) => s.kind === "stuck" && s.releasedAtRound === 2);
  const { rates } = plan.options;
  // The faults that hit requests and invocations (the workload's own, poison and the like, are not the replay's).
  const faultsAsked = [
    rates.throttle,
    rates.exception,
    rates.timeout,
    rates.dynamodb,
    rates.dynamodbAfterWrite,
    rates.s3,
  ].some((rate) => rate > 0);
  const missing = [
    ...(faultsAsked && rounds > 0 && replayPhaseFaults === 0 ? ["no fault during the replay"] : []),
    ...(twice && givenUpAgain === 0 ? ["no record given up again after its replay"] : []),
  ];
  return {
    name: "faults stayed on during replay and redrive",
    pass: missing.length === 0,
    detail: missing.length
      ? missing.join("; ")
      : `${replayPhaseFaults} faults in ${rounds} rounds; ${givenUpAgain} records given up again after their replay`,
  };
}

function runConditions(
  plan: FaultPlan,
  harness: Harness,
  ledger: Ledger,
  reshard: readonly ReshardStep[],
  sqsDownMs: number,
  rounds: number,
): Check[] {
  const { faults, pipeline } = harness;
  const counts = ledger.counts();
  const asked = plan.schedule.split > 0;
  return [
    {
      name: "reshard: split, then merge, children read after parents (§9.1)",
      pass:
        !asked ||
        (reshard.length === 2 &&
          reshard.every((s) => s.parents.every((p) => pipeline.kinesisEsm?.finishedShards.has(p)))),
      detail: asked
        ? reshard.map((s) => `${s.action} ${s.parents.join("+")} -> ${s.children.join("+")}`).join("; ") ||
          "not done"
        : "not asked for",
    },
    {
      name: "SQS emulator restarted mid-run",
      pass: !asked || sqsDownMs > 0,
      detail: asked
        ? `down ${sqsDownMs} ms, ${harness.sqs.refused()} connections refused meanwhile`
        : "not asked for",
    },
    faultsExercised(plan, {
      throttle: faults.invocations.throttles,
      exception: faults.invocations.exceptions,
      timeout: faults.invocations.timeouts,
      dynamodb: faults.doors.dynamodbFaults,
      dynamodbAfterWrite: faults.doors.dynamodbAfterWriteFaults,
      s3: faults.doors.s3Faults,
      stuck: faults.stuckWriteRefusals,
      stuckTwice: plan.scenario.stream.filter((s) => s.kind === "stuck" && s.releasedAtRound === 2).length,
      reject: plan.scenario.jobs.concat(plan.scenario.fifoJobs).filter((j) => j.kind === "job" && j.rejected)
        .length,
      poison: counts.streamKinds.poison + counts.poisonJobs,
      duplicate: counts.streamKinds.duplicate + counts.jobMessages - counts.jobs,
      transient: plan.scenario.jobs
        .concat(plan.scenario.fifoJobs)
        .filter((j) => j.kind === "job" && j.transient).length,
    }),
    recoveryUnderFaults(plan, ledger.faultsByPhase.replay, ledger.givenUpAgain, rounds),
  ];
}

type Stopped = { readonly cause: TimeoutCause; readonly quietMs: number };

/**
 * The run's clock: what moves while the run makes progress, for the watchdog, and the activity said in
 * progress lines. `stopped` is why the run stopped waiting, once the watchdog says so.
 */
function runClock(
  watchdog: Watchdog,
  ledger: Ledger,
  pipeline: Harness["pipeline"],
  say: (line: string) => void,
): { clock: RunClock; stopped: () => Stopped | undefined } {
  let stopped: Stopped | undefined;
  const invocations = () => [...pipeline.functions.values()].reduce((n, f) => n + f.stats.invocations, 0);
  /** The mappings' requests abandoned for want of an answer (§9.1 item 13, §9.2 item 10), each retried. */
  const abandoned = () =>
    (pipeline.kinesisEsm?.stats.abandonedRequests ?? 0) +
    [...pipeline.sqsEsms.values()].reduce((n, esm) => n + esm.stats.abandonedRequests, 0);
  const clock: RunClock = {
    say,
    // What moves while the run makes progress (what settles an input moves one of these first).
    moving: () => {
      const now = Date.now();
      watchdog.observe(
        `${ledger.deliveredStream} delivered, ${invocations()} invoked, ${ledger.dead.size} dead-lettered`,
        now,
      );
      const cause = stopped ? undefined : watchdog.expired(now);
      if (cause) stopped = { cause, quietMs: watchdog.quietMs(now) };
      return stopped === undefined;
    },
    activity: () =>
      [...pipeline.functions.entries()]
        .map(
          ([name, f]) =>
            `${name} ${f.stats.invocations}${f.stats.errors ? ` (${f.stats.errors} errors)` : ""}`,
        )
        .join(", ") + (abandoned() > 0 ? `; mapping requests abandoned unanswered: ${abandoned()}` : ""),
    quietMs: () => watchdog.quietMs(Date.now()),
  };
  return { clock, stopped: () => stopped };
}

/**
 * Until every input is accounted for (workers' own events still flow through the processor), the
 * pipeline is idle, or the run is out of time; then the operator's recovery, unless out of time already.
 */
async function settleAndRecover(
  harness: Harness,
  ledger: Ledger,
  clock: RunClock,
  replay: Replay,
): Promise<{ readonly recovery: Recovery; readonly settledAt: number }> {
  const settled = await settle(
    harness,
    ledger,
    clock,
    Date.now(),
    () => ledger.unsettled().count === 0,
    () => {
      const open = ledger.unsettled(3);
      return `settling: ${open.count} inputs not yet accounted for (${open.names.join("; ")})`;
    },
  );
  const settledAt = Date.now();
  const recovery =
    settled === Settled.OutOfTime
      ? { rounds: 0, replayedRecords: 0, redrivenJobs: 0, settled, roundTimes: [] }
      : await recover(harness, ledger, clock, replay);
  return { recovery, settledAt };
}

/** What a run out of time still had in flight: the inputs not accounted for or not applied, first. */
function stillInFlight(ledger: Ledger): string[] {
  return [
    ...new Set([...ledger.unsettled(20).names, ...ledger.unapplied(20).names]),
    ...(ledger.replayPending > 0
      ? [`${ledger.replayPending} replayed records not yet read by the processor`]
      : []),
  ].slice(0, 21);
}

/** Everything the run saw, once judged: the verdict's checks, the run's conditions, and its figures. */
interface Outcome {
  readonly plan: FaultPlan;
  readonly harness: Harness;
  readonly ledger: Ledger;
  readonly production: Production;
  readonly recovery: Recovery;
  readonly verdict: Verdict;
  readonly bounds: StallBounds;
  readonly timedOut: boolean;
  readonly timeout: Stopped | undefined;
  readonly started: number;
  readonly timeline?: ProductionSummary | undefined;
  /** When each step ended: the harness up, production, settling, recovery (the run's `phases`). */
  readonly steps: {
    readonly up: number;
    readonly produced: number;
    readonly settled: number;
    readonly ended: number;
  };
}

function chaosResult(outcome: Outcome): ChaosResult {
  const { plan, harness, ledger, production, recovery, verdict, timedOut } = outcome;
  const { reshard, sqsDownMs } = production;
  const checks = [
    ...verdict.checks,
    ...runConditions(plan, harness, ledger, reshard, sqsDownMs, recovery.rounds),
  ];
  const inFlight = timedOut ? stillInFlight(ledger) : [];
  const { started, steps } = outcome;
  const now = Date.now();
  return {
    seed: plan.options.seed,
    durationMs: now - started,
    phases: {
      startMs: steps.up - started,
      productionMs: steps.produced - steps.up,
      settleMs: steps.settled - steps.produced,
      rounds: recovery.roundTimes,
      judgeMs: now - steps.ended,
    },
    timedOut,
    timeout: outcome.timeout,
    pass: !timedOut && checks.every((c) => c.pass),
    checks,
    counts: ledger.counts(),
    partialSplits: harness.pipeline.partialSplits,
    proof: {
      toolRuns: verdict.toolRuns.runs,
      maxRunsPerJob: verdict.toolRuns.maxRuns,
      jobsRunMoreThanOnce: verdict.toolRuns.rerun,
      runSenders: verdict.toolRuns.senders,
      witnessEffects: harness.witness.totals.effects,
      oracleMismatches: verdict.oracleMismatches,
      effectOrderViolations: verdict.orderViolations,
      replayRounds: recovery.rounds,
      replayPhaseFaults: ledger.faultsByPhase.replay,
      givenUpAgainAfterReplay: ledger.givenUpAgain,
    },
    faults: {
      ...harness.faults.doors,
      ...harness.faults.invocations,
      stuckWriteRefusals: harness.faults.stuckWriteRefusals,
      sqsRefusedConnections: harness.sqs.refused(),
      sqsDownMs,
      replayedRecords: recovery.replayedRecords,
      redrivenJobs: recovery.redrivenJobs,
    },
    reshard,
    bounds: outcome.bounds,
    inFlight,
    productFailures: verdict.checks.filter((c) => !c.pass).map((c) => c.name),
    diagnostics: verdict.diagnostics,
    ...(outcome.timeline ? { timeline: outcome.timeline } : {}),
  };
}

export async function runChaos(plan: FaultPlan, options: RunOptions): Promise<ChaosResult> {
  const started = Date.now();
  const watchdog = new Watchdog(
    started + options.timeoutMs,
    options.stallTimeoutMs ?? Number.POSITIVE_INFINITY,
    started,
  );
  const ledger = new Ledger();
  const say = (line: string) =>
    options.onProgress?.(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${line}`);
  const timeline = options.recordTimeline ? new ProductionTimeline() : undefined;
  const harness = await startHarness(plan, ledger, { ...options, say, ...(timeline ? { timeline } : {}) });
  const up = Date.now();
  const { pipeline } = harness;
  const { clock, stopped } = runClock(watchdog, ledger, pipeline, say);
  try {
    harness.faults.active = true;
    say(
      `pipeline up; producing ${plan.scenario.stream.length} records and ${plan.scenario.jobs.length + plan.scenario.fifoJobs.length} jobs in ${plan.schedule.chunks} chunks`,
    );
    const production = await produce(plan, harness, ledger, clock, timeline && ((m) => timeline.chunk(m)));
    const produced = Date.now();
    const { recovery, settledAt } = await settleAndRecover(
      harness,
      ledger,
      clock,
      options.replay ?? replayQuarantine,
    );
    const timedOut = recovery.settled === Settled.OutOfTime;
    const endedAt = Date.now();
    await pipeline.stop();
    const final = await readFinalState(harness.direct.dynamodb, harness.direct.s3, pipeline);
    const bounds = stallBounds(
      options.settings,
      options.timeScale,
      plan.options.sqsOutageMs,
      options.stallMarginMs,
    );
    const verdict = judge({
      ledger,
      witness: harness.witness,
      final,
      bounds,
      timedOut,
      endedAt,
      explain: options.explain,
    });
    const timeout = timedOut ? stopped() : undefined;
    const s = options.settings;
    return chaosResult({
      timeline: timeline?.summary(ledger, up, produced, {
        // The processor's batches in flight at most: a lane per shard and parallelization (2 shards, 3 split).
        processor: s.stream.shard_count * s.processor.esm.parallelization_factor,
        "tool-worker": s.tool_worker.esm.maximum_concurrency ?? Number.POSITIVE_INFINITY,
        "fifo-worker": s.fifo_worker.esm.maximum_concurrency ?? Number.POSITIVE_INFINITY,
        "dlq-redrive": s.dlq_redrive.esm.maximum_concurrency ?? Number.POSITIVE_INFINITY,
      }),
      plan,
      harness,
      ledger,
      production,
      recovery,
      verdict,
      bounds,
      timedOut,
      timeout,
      started,
      steps: { up, produced, settled: settledAt, ended: endedAt },
    });
  } finally {
    await harness.stop();
  }
}
