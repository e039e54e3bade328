/**
 * The fault plan: everything a chaos run does, drawn from its seed. The workload (which records and
 * messages are poison, stuck, transient or sent twice), the production chunks and the moments of the
 * reshard and the SQS restart are fixed by the seed; the faults that hit requests and invocations are
 * drawn from seeded streams in the order the requests arrive, so their sequence is the seed's, and which
 * request meets which draw depends on the machine's timing. Each kind's first draw is a fault: how many
 * draws a run makes depends on timing too (a loaded machine batches more records into fewer
 * invocations), and a short run must still show every fault it asks for, not only on a fast machine.
 */
import { buildScenario, type Scenario } from "@mcp-pipeline/local-runtime";
import { seededRandom } from "@mcp-pipeline/retry";

/** Rates of the faults that hit requests and invocations while faults are on (each a fraction). */
export interface FaultRates {
  /** Records and messages that can never be read (quarantine or DLQ at once). */
  readonly poison: number;
  /** Jobs whose first attempt fails transiently in the tool (a downstream's passing error). */
  readonly transient: number;
  /** Stream records and jobs the producer sends twice (a producer retry). */
  readonly duplicate: number;
  /** Stream events whose writes are throttled until the processor's retries run out. */
  readonly stuck: number;
  /** Of the stuck events, those that stay stuck through their first replay (given up again, replayed again). */
  readonly stuckTwice: number;
  /** Jobs the downstream refuses for good (a 422: stored as failed, no effect). */
  readonly reject: number;
  /** Invocations the Lambda service throttles (the function does not run). */
  readonly throttle: number;
  /** Invocations whose handler throws after it ran (its effects done, its answer lost). */
  readonly exception: number;
  /** Invocations that overrun their timeout after the handler ran (Lambda reports a timeout). */
  readonly timeout: number;
  /** DynamoDB requests answered with a throttle or a 5xx before reaching the table. */
  readonly dynamodb: number;
  /** DynamoDB writes applied, then answered with a 5xx (the caller cannot know it worked). */
  readonly dynamodbAfterWrite: number;
  /** S3 requests answered 503 SlowDown or 500 InternalError. */
  readonly s3: number;
}

export interface ChaosOptions {
  readonly events: number;
  readonly jobs: number;
  readonly fifoJobs: number;
  readonly sessions: number;
  readonly seed: number;
  readonly rates: FaultRates;
  /** Stream records per production chunk; the producer keeps at most one chunk ahead of the processor. */
  readonly chunk: number;
  /** How long the SQS endpoint refuses connections around its restart, in ms. */
  readonly sqsOutageMs: number;
  /** The reshard and the SQS restart; false leaves them out (a short run aimed at one check). */
  readonly disruptions?: boolean;
}

/**
 * Rates at which a default run (1,000 events) sees every kind: S3 requests are few (quarantine objects and
 * large results), and invocations a few hundred, so those rates are higher than the per-record ones.
 */
export const DEFAULT_RATES: FaultRates = {
  poison: 0.01,
  transient: 0.05,
  duplicate: 0.02,
  stuck: 0.005,
  stuckTwice: 0.3,
  reject: 0.02,
  throttle: 0.02,
  exception: 0.02,
  timeout: 0.03,
  dynamodb: 0.01,
  dynamodbAfterWrite: 0.005,
  s3: 0.1,
};

/** When, in production chunks, the run reshards and restarts the SQS emulator ("in the middle"). */
export interface Schedule {
  readonly chunks: number;
  /** After this chunk is produced, a shard is split; after `merge`, its two children are merged. */
  readonly split: number;
  readonly merge: number;
  readonly sqsRestart: number;
}

export interface FaultPlan {
  readonly options: ChaosOptions;
  readonly scenario: Scenario;
  /** Indexes into scenario.jobs / scenario.fifoJobs of the valid jobs that are sent twice. */
  readonly duplicateJobs: ReadonlySet<number>;
  readonly duplicateFifoJobs: ReadonlySet<number>;
  readonly schedule: Schedule;
  /** A seeded stream of draws per fault kind, whose first draw is a fault when the kind's rate is not 0. */
  draw(kind: keyof FaultRates): boolean;
}

/** Chunk 0 never comes: a schedule without disruptions names it for the reshard and the restart. */
export function schedule(streamItems: number, chunk: number, disruptions = true): Schedule {
  const chunks = Math.max(1, Math.ceil(streamItems / chunk));
  if (!disruptions) return { chunks, split: 0, merge: 0, sqsRestart: 0 };
  // At least three chunks apart where the run has them, so records flow through the parent, the
  // children and the merged shard; a one-chunk run still splits and merges after it.
  return {
    chunks,
    split: Math.max(1, Math.floor(chunks / 3)),
    merge: Math.max(1, Math.floor((2 * chunks) / 3)),
    sqsRestart: Math.max(1, Math.floor(chunks / 2)),
  };
}

export function buildPlan(options: ChaosOptions, now: number = Date.now()): FaultPlan {
  const { rates } = options;
  const scenario = buildScenario(
    {
      events: options.events,
      jobs: options.jobs,
      fifoJobs: options.fifoJobs,
      sessions: options.sessions,
      poisonRate: rates.poison,
      transientRate: rates.transient,
      duplicateRate: rates.duplicate,
      stuckRate: rates.stuck,
      stuckTwiceRate: rates.stuckTwice,
      rejectRate: rates.reject,
      seed: options.seed,
      // Calls of several events, and jobs whose tool calls the witness (local/chaos/src/witness.ts).
      lifecycle: true,
      downstream: true,
    },
    now,
  );
  // Separate streams from the scenario's, so a fault rate changes no workload draw and vice versa.
  const jobDraw = seededRandom(options.seed ^ 0x5bd1e995);
  const twice = (count: number) => {
    const out = new Set<number>();
    for (let i = 0; i < count; i++) if (jobDraw() < rates.duplicate) out.add(i);
    return out;
  };
  const streams = new Map<keyof FaultRates, () => number>();
  const kinds = Object.keys(DEFAULT_RATES) as (keyof FaultRates)[];
  kinds.forEach((kind, n) => {
    streams.set(kind, seededRandom((options.seed + 0x9e3779b9 * (n + 1)) >>> 0));
  });
  const drawn = new Set<keyof FaultRates>();
  return {
    options,
    scenario,
    duplicateJobs: twice(scenario.jobs.length),
    duplicateFifoJobs: twice(scenario.fifoJobs.length),
    schedule: schedule(scenario.stream.length, options.chunk, options.disruptions ?? true),
    draw: (kind) => {
      if (rates[kind] > 0 && !drawn.has(kind)) {
        drawn.add(kind);
        return true;
      }
      return (streams.get(kind) as () => number)() < rates[kind];
    },
  };
}
