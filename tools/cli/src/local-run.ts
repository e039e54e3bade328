import { UsageError, wholeNumber } from "./cli.js";

/**
 * The options `npm start` and `npm run chaos` share, both running the whole local pipeline: which
 * environment's settings, how time is scaled, how long to wait, where the function zips are, how a
 * bisect-on partial split is counted, and what is printed. Spread into a parseCommandLine config.
 */
export const LOCAL_RUN_OPTIONS = {
  env: { type: "string" },
  "time-scale": { type: "string" },
  timeout: { type: "string" },
  dist: { type: "string" },
  "partial-split-accounting": { type: "string" },
  json: { type: "boolean" },
  verbose: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/**
 * The workload options both put into the local pipeline (their defaults and ranges are each command's):
 * how many events and jobs, over how many sessions, with which seed, and the shared fault rates.
 */
export const WORKLOAD_OPTIONS = {
  events: { type: "string" },
  jobs: { type: "string" },
  "fifo-jobs": { type: "string" },
  sessions: { type: "string" },
  seed: { type: "string" },
  "poison-rate": { type: "string" },
  "transient-rate": { type: "string" },
  "duplicate-rate": { type: "string" },
  "stuck-rate": { type: "string" },
} as const;

/** --seed: any 32-bit unsigned whole number, 42 when absent; the same seed gives the same workload. */
export function seedOption(value: string | undefined): number {
  return wholeNumber("seed", value, { fallback: 42, min: 0, max: 2 ** 32 - 1 });
}

/** What parseCommandLine gives for LOCAL_RUN_OPTIONS. */
export interface LocalRunValues {
  readonly env?: string | undefined;
  readonly "time-scale"?: string | undefined;
  readonly timeout?: string | undefined;
  readonly dist?: string | undefined;
  readonly "partial-split-accounting"?: string | undefined;
  readonly json?: boolean | undefined;
  readonly verbose?: boolean | undefined;
  readonly help?: boolean | undefined;
}

export interface LocalRunOptions {
  readonly env: string;
  readonly timeScale: number;
  readonly timeoutMs: number;
  readonly distDir: string | undefined;
  /** As typed: the caller's partialSplitAccountingOption checks it (the names are the local runtime's). */
  readonly partialSplitAccounting: string | undefined;
  readonly json: boolean;
  readonly verbose: boolean;
  readonly help: boolean;
}

/**
 * Checks and reads LOCAL_RUN_OPTIONS. `environmentName` is what names an environment (the settings'
 * ENVIRONMENT_NAME: this package has no dependencies); `environ` is the process environment: under
 * `npm start --json`, npm keeps `--json` for itself (and prints its banner on stderr instead of stdout)
 * and passes it on as npm_config_json=true.
 */
export function localRunOptions(
  values: LocalRunValues,
  environ: NodeJS.ProcessEnv,
  defaults: { readonly timeoutSeconds: number; readonly environmentName: RegExp },
): LocalRunOptions {
  const env = values.env ?? "dev";
  if (!defaults.environmentName.test(env))
    throw new UsageError(`--env must name an environment (e.g. dev), got "${env}"`);
  if (values.dist === "") throw new UsageError("--dist needs a directory");
  return {
    env,
    // ÷10: at ÷20 a worker's 30 s is 1.5 s, and on two cores a 10,000-event run timed out most worker
    // invocations, each followed by a cold start (docs/benchmarks/ceiling.md).
    timeScale: wholeNumber("time-scale", values["time-scale"], { fallback: 10, min: 1, max: 1_000 }),
    timeoutMs:
      wholeNumber("timeout", values.timeout, { fallback: defaults.timeoutSeconds, min: 1, max: 86_400 }) *
      1000,
    distDir: values.dist,
    partialSplitAccounting: values["partial-split-accounting"],
    json: values.json ?? environ.npm_config_json === "true",
    verbose: values.verbose ?? false,
    help: values.help ?? false,
  };
}
