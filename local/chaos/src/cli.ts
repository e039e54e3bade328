/** `npm run chaos`: the command line, parsed and checked, and the main job. */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  ExitCode,
  fraction,
  LOCAL_RUN_OPTIONS,
  localRunOptions,
  parseCommandLine,
  refuseCommandLine,
  seedOption,
  shown,
  UsageError,
  WORKLOAD_OPTIONS,
  wholeNumber,
} from "@mcp-pipeline/cli";
import type { PartialSplitAccounting } from "@mcp-pipeline/local-runtime";
import { partialSplitAccountingOption } from "@mcp-pipeline/local-runtime";
import {
  ENVIRONMENT_NAME,
  type EnvironmentSettings,
  loadSettings,
  SettingsError,
} from "@mcp-pipeline/settings";
import {
  type DiagnosticsFile,
  DiagnosticsFileError,
  formatTimeline,
  JOB_ID,
  readDiagnostics,
} from "./diagnostics.js";
import { buildPlan, type ChaosOptions, DEFAULT_RATES } from "./plan.js";
import { formatJson, formatTable } from "./report.js";
import { type ChaosResult, type RunOptions, RunVerdict, runChaos, verdictOf } from "./run.js";

export const USAGE = `npm run chaos -- [options]

Runs the whole local pipeline (as npm start does) under injected faults, reproducibly from --seed:
poison records and messages, transient tool errors, duplicate producer sends, stuck writes (the
processor's retries run out), throttled invocations, handler exceptions, timeouts, DynamoDB and S3
throttles and 5xx (some after the write), a reshard (a shard split, then its children merged) and a
restart of the SQS emulator mid-run. Then the downstream recovers, what was set aside is replayed, and
a ledger prints a pass/fail table.

Workload
  --events N           lifecycle events put into the stream              (default 1000, at most 100000)
  --jobs N             jobs sent to the tool queue                       (default: events / 10)
  --fifo-jobs N        jobs sent to the FIFO queue                       (default: events / 20)
  --sessions N         sessions (partition keys and message groups)      (default 20)
  --seed N             the same seed gives the same workload and fault sequence (default 42)
  --chunk N            stream records per production chunk               (default: events / 12, at least 50)

Fault rates (each a fraction from 0 to 1)
  --poison-rate R        (default ${DEFAULT_RATES.poison})    --transient-rate R   (default ${DEFAULT_RATES.transient})
  --duplicate-rate R     (default ${DEFAULT_RATES.duplicate})    --stuck-rate R       (default ${DEFAULT_RATES.stuck})
  --throttle-rate R      (default ${DEFAULT_RATES.throttle})    --exception-rate R   (default ${DEFAULT_RATES.exception})
  --timeout-rate R       (default ${DEFAULT_RATES.timeout})    --dynamodb-rate R    (default ${DEFAULT_RATES.dynamodb})
  --dynamodb-after-write-rate R (default ${DEFAULT_RATES.dynamodbAfterWrite})  --s3-rate R  (default ${DEFAULT_RATES.s3})
  --stuck-twice-rate R   of the stuck events, those still stuck at the first replay (default ${DEFAULT_RATES.stuckTwice})
  --reject-rate R        jobs the downstream refuses for good (default ${DEFAULT_RATES.reject})
  --sqs-outage MS        how long the SQS endpoint is down around its restart (default 1000)

Run
  --env NAME           settings from terraform/environments/NAME/terraform.tfvars.json (default dev)
  --time-scale N       divide every duration setting by N                (default 10)
  --timeout S          give up after S seconds: the run says "timed out" with what was still in
                       flight, never "lost"                              (default 600)
  --stall-timeout S    give up sooner when nothing moved (no record delivered, no function invoked,
                       no message dead-lettered) for S seconds           (default 300)
  --dist DIR           where the function zips are                       (default dist/, built by npm run chaos)
  --partial-split-accounting NAME
                       with bisect on, whether a partial answer's split at the failed record uses a
                       retry, which AWS does not document (docs/aws-semantics.md §1.4): split-free
                       (AWS's wording on splitting) or counts-attempt   (default split-free)
  --verbose            show the functions' warning and error logs
  --diagnostics FILE   write the per-job diagnostics (JSON) of every job whose tool ran more than once
                       (and of the --explain job): its runs, invocations, incidents, the cause chosen
  --timeline FILE      write the production phase's timeline (JSON): per chunk the backlog wait, the put,
                       the jobs sent, its records delivered and its jobs finished; each function's
                       invocations in flight; each shard poller's reading, invoking and waiting; the
                       SQS mappings' receives (docs/benchmarks/ceiling.md)
  --explain JOB_ID     print one job's timeline (job-<seed>-<n> or fifo-<seed>-<n>) at the end of the run:
                       its runs (received, answered, outcome, client gone), invocations, incidents and
                       the cause chosen for each run after the first
  --from FILE          with --explain: read the timeline from a file --diagnostics wrote, run nothing
  --json               print the result as one JSON object on stdout (progress goes to stderr)
  -h, --help           show this help

Exit status: 0 when every check passes, 1 when one fails (also in a run out of time) or the
--diagnostics or --timeline file could not be written, 2 on a bad option (a --diagnostics or
--timeline file that cannot be written is refused before the run), 3 when the run timed out with no check
failed. With --explain --from: 0 when the job is in the file, 1 when it is not, 2 when the file cannot
be read as a diagnostics file.`;

export interface CliOptions {
  readonly chaos: ChaosOptions;
  readonly env: string;
  readonly timeScale: number;
  readonly timeoutMs: number;
  readonly stallTimeoutMs: number;
  readonly distDir: string | undefined;
  /** The Kinesis mapping's accounting of a bisect-on partial split (--partial-split-accounting). */
  readonly partialSplitAccounting: PartialSplitAccounting;
  readonly json: boolean;
  readonly verbose: boolean;
  readonly help: boolean;
  /** Where to write the per-job diagnostics (--diagnostics). */
  readonly diagnosticsFile: string | undefined;
  /** Where to write the production phase's timeline (--timeline). */
  readonly timelineFile: string | undefined;
  /** The job whose timeline to print (--explain). */
  readonly explain: string | undefined;
  /** A diagnostics file to read the timeline from, instead of a run (--from). */
  readonly from: string | undefined;
}

export const TIMED_OUT = 3;

const RATE_OPTIONS = {
  poison: "poison-rate",
  transient: "transient-rate",
  duplicate: "duplicate-rate",
  stuck: "stuck-rate",
  stuckTwice: "stuck-twice-rate",
  reject: "reject-rate",
  throttle: "throttle-rate",
  exception: "exception-rate",
  timeout: "timeout-rate",
  dynamodb: "dynamodb-rate",
  dynamodbAfterWrite: "dynamodb-after-write-rate",
  s3: "s3-rate",
} as const satisfies Record<keyof typeof DEFAULT_RATES, string>;

function parse(argv: readonly string[]) {
  return parseCommandLine(argv, {
    allowPositionals: false,
    options: {
      ...WORKLOAD_OPTIONS,
      chunk: { type: "string" },
      "sqs-outage": { type: "string" },
      ...Object.fromEntries(Object.values(RATE_OPTIONS).map((name) => [name, { type: "string" as const }])),
      "stall-timeout": { type: "string" },
      diagnostics: { type: "string" },
      timeline: { type: "string" },
      explain: { type: "string" },
      from: { type: "string" },
      ...LOCAL_RUN_OPTIONS,
    },
  });
}

export function parseCli(argv: readonly string[], environ: NodeJS.ProcessEnv = {}): CliOptions {
  const values = parse(argv).values;
  const run = localRunOptions(values, environ, { timeoutSeconds: 600, environmentName: ENVIRONMENT_NAME });
  const v = values as Record<string, string | boolean | undefined>;
  const text = (name: string) => v[name] as string | undefined;
  const explain = text("explain");
  if (explain !== undefined && !JOB_ID.test(explain))
    throw new UsageError(
      `--explain needs a job's call id (job-<seed>-<n> or fifo-<seed>-<n>), got "${shown(explain)}"`,
    );
  const diagnosticsFile = text("diagnostics");
  if (diagnosticsFile === "") throw new UsageError("--diagnostics needs a file");
  const timelineFile = text("timeline");
  if (timelineFile === "") throw new UsageError("--timeline needs a file");
  const from = text("from");
  if (from === "") throw new UsageError("--from needs a file");
  if (from !== undefined && explain === undefined)
    throw new UsageError("--from reads a diagnostics file for --explain: name the job with --explain");
  if (from !== undefined && diagnosticsFile !== undefined)
    throw new UsageError("--from runs nothing, so there are no diagnostics to write: drop --diagnostics");
  const events = wholeNumber("events", text("events"), { fallback: 1_000, min: 1, max: 100_000 });
  const rates = Object.fromEntries(
    Object.entries(RATE_OPTIONS).map(([key, name]) => [
      key,
      fraction(name, text(name), DEFAULT_RATES[key as keyof typeof DEFAULT_RATES]),
    ]),
  ) as unknown as ChaosOptions["rates"];
  return {
    chaos: {
      events,
      jobs: wholeNumber("jobs", text("jobs"), { fallback: Math.ceil(events / 10), min: 0, max: 100_000 }),
      fifoJobs: wholeNumber("fifo-jobs", text("fifo-jobs"), {
        fallback: Math.ceil(events / 20),
        min: 0,
        max: 100_000,
      }),
      sessions: wholeNumber("sessions", text("sessions"), { fallback: 20, min: 1, max: 100_000 }),
      seed: seedOption(text("seed")),
      chunk: wholeNumber("chunk", text("chunk"), {
        fallback: Math.max(50, Math.ceil(events / 12)),
        min: 1,
        max: 100_000,
      }),
      sqsOutageMs: wholeNumber("sqs-outage", text("sqs-outage"), { fallback: 1_000, min: 0, max: 600_000 }),
      rates,
    },
    ...run,
    stallTimeoutMs:
      wholeNumber("stall-timeout", text("stall-timeout"), { fallback: 300, min: 1, max: 86_400 }) * 1000,
    partialSplitAccounting: partialSplitAccountingOption(run.partialSplitAccounting),
    diagnosticsFile,
    timelineFile,
    explain,
    from,
  };
}

/**
 * Makes sure the diagnostics can be written before a run that may last an hour: creates the file's folder
 * (`npm run bench -- --only chaos-scale` keeps it in .tmp/, which a clean clone lacks) and opens the file
 * for writing, keeping what it holds until the run replaces it. Says why not, or undefined.
 */
export async function prepareDiagnosticsFile(file: string): Promise<string | undefined> {
  try {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, "", { flag: "a" });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Prints the timeline of `callId` from a diagnostics file (--explain with --from). */
async function explainFromFile(callId: string, file: string): Promise<number> {
  let read: DiagnosticsFile;
  try {
    read = readDiagnostics(await readFile(file, "utf8"));
  } catch (error) {
    if (error instanceof DiagnosticsFileError || (error as NodeJS.ErrnoException).code !== undefined) {
      process.stderr.write(`--from ${file}: ${(error as Error).message}\n`);
      return ExitCode.Usage;
    }
    throw error;
  }
  const job = read.jobs.find((j) => j.callId === callId);
  if (!job) {
    process.stderr.write(
      `--explain ${callId}: not in ${file} (it holds the ${read.jobs.length} jobs of seed ${read.seed} run more than once, and the one --explain named)\n`,
    );
    return ExitCode.Failed;
  }
  process.stdout.write(`${formatTimeline(job)}\n`);
  return ExitCode.Ok;
}

const root = join(import.meta.dirname, "../../..");

/** Refuses a --diagnostics or --timeline file that cannot be written, before a run that may last an hour. */
async function refuseOutputFiles(options: CliOptions): Promise<number | undefined> {
  const files = [
    ["--diagnostics", options.diagnosticsFile],
    ["--timeline", options.timelineFile],
  ] as const;
  for (const [option, file] of files) {
    if (file === undefined) continue;
    const problem = await prepareDiagnosticsFile(file);
    if (problem === undefined) continue;
    process.stderr.write(`${option} ${file}: ${problem} (nothing was run)\n`);
    return ExitCode.Usage;
  }
  return undefined;
}

/** The settings of --env, or the exit status of an environment that has none. */
async function settingsOf(
  options: CliOptions,
): Promise<{ readonly settings: EnvironmentSettings } | { readonly exit: number }> {
  try {
    return { settings: await loadSettings(root, options.env) };
  } catch (error) {
    if (error instanceof SettingsError || (error as NodeJS.ErrnoException).code === "ENOENT") {
      process.stderr.write(`--env ${options.env}: ${(error as Error).message}\n`);
      return { exit: ExitCode.Usage };
    }
    throw error;
  }
}

function runOptions(options: CliOptions, settings: EnvironmentSettings): RunOptions {
  return {
    settings,
    timeScale: options.timeScale,
    timeoutMs: options.timeoutMs,
    stallTimeoutMs: options.stallTimeoutMs,
    distDir: options.distDir ?? join(root, "dist"),
    partialSplitAccounting: options.partialSplitAccounting,
    explain: options.explain,
    recordTimeline: options.timelineFile !== undefined,
    onProgress: (line) => process.stderr.write(`${line}\n`),
    ...(options.verbose
      ? { onLog: (fn: string, line: string) => process.stderr.write(`${fn}: ${line}\n`) }
      : {}),
  };
}

/** Writes the per-job diagnostics (--diagnostics); false when the file could not be written. */
async function writeDiagnostics(options: CliOptions, result: ChaosResult): Promise<boolean> {
  if (options.diagnosticsFile === undefined) return true;
  const file: DiagnosticsFile = { seed: result.seed, jobs: result.diagnostics };
  try {
    await writeFile(options.diagnosticsFile, `${JSON.stringify(file, null, 1)}\n`);
    process.stderr.write(
      `diagnostics of ${result.diagnostics.length} jobs written to ${options.diagnosticsFile}\n`,
    );
    return true;
  } catch (error) {
    // The run is over and its table printed; what was asked for is missing, and the status says so.
    process.stderr.write(`--diagnostics ${options.diagnosticsFile}: ${(error as Error).message}\n`);
    return false;
  }
}

/** Writes the production phase's timeline (--timeline); false when the file could not be written. */
async function writeTimeline(options: CliOptions, result: ChaosResult): Promise<boolean> {
  if (options.timelineFile === undefined) return true;
  try {
    await mkdir(dirname(options.timelineFile), { recursive: true });
    await writeFile(
      options.timelineFile,
      `${JSON.stringify({ seed: result.seed, ...result.timeline }, null, 1)}\n`,
    );
    process.stderr.write(`production timeline written to ${options.timelineFile}\n`);
    return true;
  } catch (error) {
    process.stderr.write(`--timeline ${options.timelineFile}: ${(error as Error).message}\n`);
    return false;
  }
}

/** The timeline of the --explain job, or why there is none. */
function printExplained(options: CliOptions, result: ChaosResult): void {
  if (options.explain === undefined) return;
  const job = result.diagnostics.find((j) => j.callId === options.explain);
  // With --json, stdout holds the one JSON object: the timeline goes to stderr.
  const out = options.json ? process.stderr : process.stdout;
  out.write(
    job
      ? `\n${formatTimeline(job)}\n`
      : `\n--explain ${options.explain}: not a job of this run (seed ${result.seed})\n`,
  );
}

function exitStatus(result: ChaosResult, diagnosticsFailed: boolean): number {
  const verdict = verdictOf(result);
  if (diagnosticsFailed && verdict !== RunVerdict.Fail) return ExitCode.Failed;
  if (verdict === RunVerdict.TimedOut) return TIMED_OUT;
  return verdict === RunVerdict.Pass ? ExitCode.Ok : ExitCode.Failed;
}

export async function main(argv: readonly string[]): Promise<number> {
  let options: CliOptions;
  try {
    options = parseCli(argv, process.env);
  } catch (error) {
    return refuseCommandLine(error, USAGE);
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.Ok;
  }
  if (options.explain !== undefined && options.from !== undefined)
    return explainFromFile(options.explain, options.from);
  const refused = await refuseOutputFiles(options);
  if (refused !== undefined) return refused;
  const loaded = await settingsOf(options);
  if ("exit" in loaded) return loaded.exit;
  const result = await runChaos(buildPlan(options.chaos), runOptions(options, loaded.settings));
  process.stdout.write(`${options.json ? formatJson(result) : formatTable(result)}\n`);
  // Both, whatever the first did: a file that could not be written is no reason to lose the other.
  const written = [await writeDiagnostics(options, result), await writeTimeline(options, result)];
  const diagnosticsWritten = written.every(Boolean);
  printExplained(options, result);
  return exitStatus(result, !diagnosticsWritten);
}
