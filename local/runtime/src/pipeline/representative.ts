/**
 * Whether a run's figures describe the pipeline or the machine it ran on. npm start divides every duration
 * by its time scale (10 by default: a worker's 30 s timeout becomes 3 s) while CPU work is not scaled, so
 * on a busy machine invocations time out at the scaled timeout, jobs time out on every receive and go to
 * the DLQs, and the ledger's "lost 0" (true: they are kept) says nothing about how the pipeline behaves.
 * Pure: a summary's figures in, the verdict out.
 */

/** A function's invocations and timeouts over the run, and its timeout as the run scaled it. */
export interface FunctionLoad {
  readonly invocations: number;
  readonly timeouts: number;
  readonly timeoutMs: number;
  /** Its timeout in terraform.tfvars.json, in seconds. */
  readonly timeoutSeconds: number;
}

export interface LoadFigures {
  readonly timeScale: number;
  readonly functions: Readonly<Record<string, FunctionLoad>>;
  /** Jobs sent, poison jobs among them, and messages that ended in the tool and FIFO DLQs. */
  readonly jobsIn: number;
  readonly poisonJobs: number;
  readonly sentToDlq: number;
}

export type Representativeness =
  | { readonly representative: true }
  | {
      readonly representative: false;
      /** What dominated the run, one line each. */
      readonly why: readonly string[];
      /** What to pass (or do) for a run that shows the pipeline. */
      readonly advice: string;
    };

/** A function whose invocations time out this often (and at least this many times) dominates the run. */
export const TIMEOUT_SHARE = 0.2;
export const MIN_TIMEOUTS = 3;
/** Jobs beyond the poison ones that ended in a DLQ, as a share of the valid jobs. */
export const EXTRA_DLQ_SHARE = 0.1;

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 1_000 ? 2 : 1)} s`;

export function judgeRepresentative(figures: LoadFigures): Representativeness {
  const why: string[] = [];
  for (const [name, f] of Object.entries(figures.functions)) {
    if (f.timeouts >= MIN_TIMEOUTS && f.timeouts >= TIMEOUT_SHARE * f.invocations)
      why.push(
        `${f.timeouts} of ${f.invocations} ${name} invocations timed out at ${seconds(f.timeoutMs)} (its ${f.timeoutSeconds} s ÷ ${figures.timeScale})`,
      );
  }
  const validJobs = figures.jobsIn - figures.poisonJobs;
  const extra = figures.sentToDlq - figures.poisonJobs;
  if (extra > 0 && extra >= EXTRA_DLQ_SHARE * validJobs)
    why.push(
      `${figures.sentToDlq} of ${figures.jobsIn} jobs ended in the DLQs, only ${figures.poisonJobs} of them poison: the others failed every receive (timeouts)`,
    );
  if (why.length === 0) return { representative: true };
  const smaller = Math.max(1, Math.floor(figures.timeScale / 5));
  const advice =
    figures.timeScale > 1
      ? `durations ÷${figures.timeScale} are too short for this machine's load: pass --time-scale ${smaller} (or --time-scale 1 for the real durations), or run on a quieter machine`
      : "the real durations are too short for this machine's load: run on a quieter machine, or with fewer inputs (--events, --jobs, --fifo-jobs)";
  return { representative: false, why, advice };
}
