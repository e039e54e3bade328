import {
  fraction,
  LOCAL_RUN_OPTIONS,
  localRunOptions,
  parseCommandLine,
  seedOption,
  UsageError,
  WORKLOAD_OPTIONS,
  wholeNumber,
} from "@mcp-pipeline/cli";
import { ENVIRONMENT_NAME } from "@mcp-pipeline/settings";
import type { PartialSplitAccounting } from "../esm/kinesis/partial-split-accounting.js";
import { partialSplitAccountingOption } from "./partial-splits.js";
import type { ScenarioOptions } from "./scenario.js";

export const USAGE = `npm start -- [options]

Runs the whole pipeline on this machine: starts DynamoDB, Kinesis, SQS and S3 emulators on 127.0.0.1
(or uses AWS_ENDPOINT_URL_* when all four services are set), creates the environment's stream, queues,
DLQs, tables and buckets, runs every function bundle from dist/ under the local event source mappings,
drives a scenario and prints a summary. Nothing is written outside a temporary directory, which is
removed however the command ends (its end, an error, Ctrl-C, SIGTERM, SIGHUP).

Scenario
  --events N           lifecycle events put into the stream              (default 2000)
  --jobs N             jobs sent to the tool queue (standard)            (default 300)
  --fifo-jobs N        jobs sent to the FIFO queue, grouped by session   (default 100)
  --sessions N         sessions (partition keys and message groups)      (default 20)
  --poison-rate R      fraction of records and messages that are unreadable   (default 0.01)
  --transient-rate R   fraction of jobs whose first attempt fails transiently (default 0.05)
  --duplicate-rate R   fraction of stream records put twice              (default 0.02)
  --stuck-rate R       fraction of stream events whose writes keep failing until the processor's
                       retries run out: they (and the rest of their batch) go to the failure
                       queue and dlq-redrive; at the end the fault stops and they are replayed
                                                                         (default 0.002)
  --seed N             the same seed gives the same scenario             (default 42)

Run
  --env NAME           settings from terraform/environments/NAME/terraform.tfvars.json (default dev)
  --time-scale N       divide every duration setting by N: function and visibility timeouts,
                       batching windows, record age, *_MS variables     (default 10)
  --timeout S          give up waiting for the scenario after S seconds  (default 100)
  --dist DIR           where the function zips are                       (default dist/, built by npm start)
  --partial-split-accounting NAME
                       with bisect on, whether a partial answer's split at the failed record uses a
                       retry, which AWS does not document (docs/aws-semantics.md §1.4): split-free
                       (AWS's wording on splitting) or counts-attempt   (default split-free)
  --json               print the summary as one JSON object on stdout (everything else goes to stderr);
                       \`npm start --json\` works too and keeps npm's own banner off stdout
  --report FILE        write an HTML report (charts over time, the ledger's verdict) to FILE
                                                              (default .tmp/npm-start-report.html)
  --no-report          write no report
  --serve              start the stack and keep it up until Ctrl-C; print, on stdout, a file for
                       \`set -a; . FILE\`: AWS_ENDPOINT_URL_*, AWS_REGION, AWS_DEFAULT_REGION, dummy
                       credentials and the resource names, ending with the comment line "# ready";
                       it runs no scenario: the Scenario options, --json and --report are refused
                       with it (--seed and --timeout only with --drill)
  --drill              with --serve: leave real failures in the stack for a person to recover (poison
                       in each DLQ, quarantined records of each reason, a stalled FIFO group), print
                       DRILL_LEDGER in the file, and \`npm run drill:check\` says when nothing is left to
                       recover and nothing was lost (docs/operations.md, "Drill")
  --verbose            show the functions' warning and error log lines (they log as on Lambda: JSON,
                       level INFO and above)
  -h, --help           show this help

Exit status
  0    lost = 0 (with --serve: the stack was stopped by Ctrl-C, SIGTERM or SIGHUP)
  1    an input was lost: found nowhere once the pipeline went quiet (the summary lists it); or a
       function's package cannot run (not built, changed since the build: the message says)
  2    a bad option, an unknown environment or a settings file that cannot be read
  3    --timeout passed with inputs still in flight: not judged, nothing is reported lost (the summary
       says what to pass); with --drill, its failures were not all in place within --timeout
  129, 130, 143  a run stopped by SIGHUP (or the end of the process that started it), Ctrl-C, SIGTERM`;

/** The exit status of a run that ran out of time with inputs still in flight: not judged, not loss. */
export const TIMED_OUT = 3;

/** Relative to the repository root (npm start's working directory). */
export const DEFAULT_REPORT = ".tmp/npm-start-report.html";

export interface CliOptions {
  readonly scenario: ScenarioOptions;
  readonly env: string;
  readonly timeScale: number;
  readonly timeoutMs: number;
  readonly distDir: string | undefined;
  /** The local Kinesis ESM's accounting of a bisect-on partial split (--partial-split-accounting). */
  readonly partialSplitAccounting: PartialSplitAccounting;
  readonly json: boolean;
  /** Where the HTML report goes; undefined with --no-report. */
  readonly report: string | undefined;
  readonly serve: boolean;
  /** With serve: failures left for a person to recover (drill.ts). */
  readonly drill: boolean;
  readonly verbose: boolean;
  readonly help: boolean;
}

/**
 * `environ` is the process environment: under `npm start --json`, npm keeps `--json` for itself (and
 * prints its banner on stderr instead of stdout) and passes it on as npm_config_json=true.
 */
export function parseCli(argv: readonly string[], environ: NodeJS.ProcessEnv = {}): CliOptions {
  const v = parse(argv).values;
  if (v.report !== undefined && v["no-report"])
    throw new UsageError("--report and --no-report cannot be used together");
  if (v.report === "") throw new UsageError("--report needs a file name (or use --no-report)");
  if (v.drill && !v.serve)
    throw new UsageError("--drill needs --serve: the drill leaves its failures in a served stack");
  if (v.serve) {
    // A served stack runs no scenario and prints no summary: these would be ignored without a word.
    const scenarioOnly = [...SCENARIO_ONLY, ...(v.drill ? [] : (["seed", "timeout"] as const))].filter(
      (name) => v[name] !== undefined,
    );
    if (scenarioOnly.length > 0)
      throw new UsageError(
        `${scenarioOnly.map((name) => `--${name}`).join(", ")} ${scenarioOnly.length === 1 ? "is" : "are"} for a scenario run, and --serve runs none${v.drill ? "" : " (--seed and --timeout are for --serve --drill)"}: drop ${scenarioOnly.length === 1 ? "it" : "them"}, or drop --serve`,
      );
  }
  const run = localRunOptions(v, environ, { timeoutSeconds: 100, environmentName: ENVIRONMENT_NAME });
  return {
    scenario: {
      events: wholeNumber("events", v.events, { fallback: 2_000, min: 0, max: 1_000_000 }),
      jobs: wholeNumber("jobs", v.jobs, { fallback: 300, min: 0, max: 100_000 }),
      fifoJobs: wholeNumber("fifo-jobs", v["fifo-jobs"], { fallback: 100, min: 0, max: 100_000 }),
      sessions: wholeNumber("sessions", v.sessions, { fallback: 20, min: 1, max: 100_000 }),
      poisonRate: fraction("poison-rate", v["poison-rate"], 0.01),
      transientRate: fraction("transient-rate", v["transient-rate"], 0.05),
      duplicateRate: fraction("duplicate-rate", v["duplicate-rate"], 0.02),
      stuckRate: fraction("stuck-rate", v["stuck-rate"], 0.002),
      seed: seedOption(v.seed),
    },
    ...run,
    partialSplitAccounting: partialSplitAccountingOption(run.partialSplitAccounting),
    report: v["no-report"] ? undefined : (v.report ?? DEFAULT_REPORT),
    serve: v.serve ?? false,
    drill: v.drill ?? false,
  };
}

/** Options that only shape a scenario run or its summary, refused with --serve. */
const SCENARIO_ONLY = [
  "events",
  "jobs",
  "fifo-jobs",
  "sessions",
  "poison-rate",
  "transient-rate",
  "duplicate-rate",
  "stuck-rate",
  "json",
  "report",
  "no-report",
] as const;

function parse(argv: readonly string[]) {
  return parseCommandLine(argv, {
    allowPositionals: false,
    options: {
      ...WORKLOAD_OPTIONS,
      report: { type: "string" },
      "no-report": { type: "boolean" },
      serve: { type: "boolean" },
      drill: { type: "boolean" },
      ...LOCAL_RUN_OPTIONS,
    },
  });
}
