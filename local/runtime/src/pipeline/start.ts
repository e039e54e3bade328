/**
 * The main job (`npm start`): the whole pipeline on one machine. See `npm start -- --help`.
 */
import { readdir, stat } from "node:fs/promises";
import { isAbsolute, join, relative } from "node:path";
import { ExitCode, refuseInOneLine } from "@mcp-pipeline/cli";
import { type EnvironmentSettings, loadSettings, SettingsError, settingsFile } from "@mcp-pipeline/settings";
import { ReservedVariableError } from "../esm/lambda/local-function.js";
import { type CliOptions, parseCli, TIMED_OUT, USAGE } from "./cli.js";
import { DrillNotReadyError, drillBriefing, planDrill, setUpDrill, watchDownstream } from "./drill.js";
import { type DrillDownstream, startDrillDownstream } from "./drill-downstream.js";
import { writeDrillLedger } from "./drill-ledger.js";
import { shownByVerbose } from "./function-logs.js";
import { FunctionPackageError } from "./function-package.js";
import { endpointsFromEnvironment, LocalPipeline } from "./pipeline.js";
import { writeReport } from "./report.js";
import { type Progress, runScenario } from "./run-scenario.js";
import { buildScenario, STUCK_PREFIX } from "./scenario.js";
import { serveEnvironment } from "./serve-env.js";
import { countSlowRequests, explainSlowRequests } from "./slow-requests.js";
import { exitStatusOf, type StopRequests, watchStopRequests } from "./stop-requests.js";
import { formatSummary, progressLine } from "./summary-format.js";
import { type Counters, Timeline } from "./timeline.js";

const root = join(import.meta.dirname, "../../../..");

/** The fault behind --stuck-rate: the processor's writes for stuck events are throttled. */
export function stuckWrites(target: string, body: string) {
  return target === "DynamoDB_20120810.PutItem" && body.includes(`"${STUCK_PREFIX}`)
    ? {
        status: 400,
        type: "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
        message: "Throughput exceeded (injected by npm start --stuck-rate)",
      }
    : undefined;
}

export const SERVE_HINT = [
  "rm -f /tmp/stack.env; npm start --silent -- --serve > /tmp/stack.env &",
  "until grep -qsx '# ready' /tmp/stack.env; do kill -0 $! || break; sleep 1; done",
  "set -a; . /tmp/stack.env; set +a",
  'aws kinesis put-record --stream-name "$STREAM_NAME" --partition-key s1 --data fileb:///tmp/event.json',
] as const;

/**
 * The served stack's lines on stdout, the hint on stderr; then waits for a request to stop. With --drill,
 * the drill's failures are put in place before the last line (`# ready`).
 */
async function serve(
  pipeline: LocalPipeline,
  options: CliOptions,
  stop: StopRequests,
  drill: DrillDownstream | undefined,
): Promise<number> {
  const lines = serveEnvironment(
    pipeline,
    options.env,
    drill ? [`DRILL_LEDGER=${drillLedgerFile(pipeline)}`] : [],
  );
  const ready = lines.pop() as string;
  process.stdout.write(`${lines.join("\n")}\n`);
  if (drill) {
    const plan = planDrill(options.scenario.seed);
    const say = (line: string) => process.stderr.write(`${line}\n`);
    try {
      const ledger = await Promise.race([
        setUpDrill(pipeline, drill, plan, {
          environment: options.env,
          boundMs: options.timeoutMs,
          onProgress: say,
        }),
        stop.requested.then(() => undefined),
      ]);
      if (ledger === undefined) return exitStatusOf(stop.cause ?? "SIGINT");
      await writeDrillLedger(drillLedgerFile(pipeline), ledger);
    } catch (error) {
      if (!(error instanceof DrillNotReadyError)) throw error;
      say(error.message);
      return TIMED_OUT;
    }
    void watchDownstream(pipeline, drill, plan, stop.requested, say);
    say(drillBriefing(plan));
  }
  process.stdout.write(`${ready}\n`);
  // The same lines as docs/local-runtime.md (operator-docs.test.ts checks): `export $(... | head)` would
  // hang, since the stack keeps running and the command substitution waits for it.
  process.stderr.write(
    `serving environment ${options.env} (durations ÷${options.timeScale}), region ${pipeline.region}; in another shell:\n` +
      SERVE_HINT.map((line) => `  ${line}\n`).join("") +
      "stop it with Ctrl-C, or kill the PID the background line gave ($!)\n",
  );
  await stop.requested;
  return ExitCode.Ok;
}

/** The drill's ledger: in the stack's temporary folder, so that it goes when the stack goes. */
const drillLedgerFile = (pipeline: LocalPipeline) => join(pipeline.codeDir ?? ".", "drill-ledger.json");

/** The settings with HTTP_TOOL_BASE_URL in both workers' environment: where http.request calls. */
function withDownstream(settings: EnvironmentSettings, url: string): EnvironmentSettings {
  const worker = <W extends EnvironmentSettings["tool_worker"]>(w: W): W => ({
    ...w,
    environment: { ...w.environment, HTTP_TOOL_BASE_URL: url },
  });
  return {
    ...settings,
    tool_worker: worker(settings.tool_worker),
    fifo_worker: worker(settings.fifo_worker),
  };
}

/** The environments that exist: the directories of terraform/environments with a tfvars file. */
async function environments(): Promise<string[]> {
  const dirs = await readdir(join(root, "terraform", "environments"), { withFileTypes: true });
  const names: string[] = [];
  for (const d of dirs)
    if (d.isDirectory() && (await stat(settingsFile(root, d.name)).catch(() => undefined)))
      names.push(d.name);
  return names.sort();
}

function counters(pipeline: LocalPipeline, progress: Progress | undefined): Counters {
  const kinesis = pipeline.kinesisEsm?.stats;
  const sqsRetried = [...pipeline.sqsEsms.values()].reduce(
    (n, s) => n + s.stats.reportedMessages + s.stats.functionErrors,
    0,
  );
  const fns = [...pipeline.functions.entries()];
  return {
    applied: pipeline.metrics.sum("processor", "Applied"),
    unreadable: pipeline.metrics.sum("processor", "Quarantined"),
    quarantineObjects: progress?.quarantineObjects ?? 0,
    dlq: progress?.dlq ?? 0,
    retried: (kinesis?.retriedBatches ?? 0) + sqsRetried,
    // Both kinds of split: in halves after a function error, at the failed record of a partial answer (§1.4).
    bisected: (kinesis?.bisections ?? 0) + (kinesis?.partialSplits ?? 0),
    invocations: Object.fromEntries(fns.map(([name, f]) => [name, f.stats.invocations])),
    timeouts: Object.fromEntries(fns.map(([name, f]) => [name, f.stats.timeouts])),
  };
}

/** The command line checked and the settings read: what a run needs before anything is built or started. */
export type Prepared =
  | { readonly kind: "exit"; readonly code: number }
  | { readonly kind: "ready"; readonly options: CliOptions; readonly settings: EnvironmentSettings };

/** How npm start names itself when it refuses an option. */
export const HELP_COMMAND = "npm start -- --help";

/**
 * Everything npm start can refuse before it builds or starts anything: the options, --help, the
 * environment and its settings file. scripts/build-first.ts builds only after this.
 */
export async function prepare(argv: readonly string[]): Promise<Prepared> {
  let options: CliOptions;
  try {
    options = parseCli(argv, process.env);
  } catch (error) {
    return { kind: "exit", code: refuseInOneLine(error, HELP_COMMAND) };
  }
  const env = process.env;
  if (
    options.json &&
    // Under npm start itself, not under a test runner that npx or npm test started.
    env.npm_lifecycle_event === "start" &&
    env.npm_lifecycle_script?.includes("build-first.ts start") &&
    env.npm_config_loglevel !== "silent" &&
    env.npm_config_json !== "true"
  )
    // npm wrote its banner ("> start", the script) on stdout before this process started: say how to avoid it.
    process.stderr.write(
      "note: npm printed its banner on stdout before the JSON; for JSON alone: npm start --silent -- --json\n",
    );
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return { kind: "exit", code: ExitCode.Ok };
  }
  const known = await environments();
  if (!known.includes(options.env)) {
    process.stderr.write(
      `no environment "${options.env}": there is no ${relative(root, settingsFile(root, options.env))}\n` +
        `environments: ${known.join(", ")} (e.g. --env ${known[0] ?? "dev"})\n`,
    );
    return { kind: "exit", code: ExitCode.Usage };
  }
  try {
    return { kind: "ready", options, settings: await loadSettings(root, options.env) };
  } catch (error) {
    if (error instanceof SettingsError) {
      process.stderr.write(`${error.message}\n`);
      return { kind: "exit", code: ExitCode.Usage };
    }
    throw error;
  }
}

/** npm start with the function zips already in place (`--dist`, or dist/ once built): see `--help`. */
export async function main(argv: readonly string[]): Promise<number> {
  const prepared = await prepare(argv);
  return prepared.kind === "exit" ? prepared.code : run(prepared.options, prepared.settings);
}

/**
 * Starts the stack, then serves it or runs the scenario. Every way out stops the mappings, the sandboxes and
 * the emulators and removes the temporary folder: the end of the run, an error, Ctrl-C, SIGTERM, SIGHUP or
 * the parent's end (stop-requests.ts). A request that comes while the stack starts is acted on once it has.
 */
export async function run(options: CliOptions, settings: EnvironmentSettings): Promise<number> {
  const stop = watchStopRequests({
    onForced: (cause) => process.stderr.write(`\n${cause} again: stopping now\n`),
  });
  void stop.requested.then((cause) =>
    process.stderr.write(`\n${cause}: stopping the stack (invocations in flight finish)...\n`),
  );
  const endpoints = endpointsFromEnvironment(process.env);
  const timeline = new Timeline();
  // The drill's downstream, given to the workers' http.request tool as a tfvars `environment` map would.
  const downstream = options.drill ? await startDrillDownstream() : undefined;
  const configured = downstream ? withDownstream(settings, downstream.endpoint) : settings;
  const stuck = (options.scenario.stuckRate ?? 0) > 0 || options.drill;
  const pipeline = new LocalPipeline({
    settings: configured,
    // The environment's own region (dev: eu-west-1), so names, ARNs and clients match what it deploys.
    region: settings.region,
    onKinesisEvent: timeline.onKinesisEvent,
    partialSplitAccounting: options.partialSplitAccounting,
    timeScale: options.timeScale,
    distDir: options.distDir ?? join(root, "dist"),
    ...(endpoints ? { endpoints } : {}),
    ...(stuck ? { processorDynamoDbFault: stuckWrites } : {}),
    onLog: options.verbose
      ? (fn, line) => {
          if (shownByVerbose(line)) process.stderr.write(`${fn}: ${line}\n`);
        }
      : () => {},
  });
  try {
    try {
      await pipeline.start();
    } catch (error) {
      // A package the build did not make (or changed since), or a configured environment Lambda would
      // refuse: what to do, not a stack.
      if (!(error instanceof FunctionPackageError || error instanceof ReservedVariableError)) throw error;
      process.stderr.write(`${error.message}\n`);
      return ExitCode.Failed;
    }
    if (stop.cause) return exitStatusOf(stop.cause);
    if (options.serve) return await serve(pipeline, options, stop, downstream);
    process.stderr.write(
      `${endpoints ? "using AWS_ENDPOINT_URL_* endpoints" : "emulators up"}; environment ${options.env}, durations ÷${options.timeScale}\n`,
    );
    const scenario = runAndReport(pipeline, timeline, options);
    // Stopped mid-run, the scenario's requests fail against the stopped stack: nothing is left to report.
    scenario.catch(() => {});
    const outcome = await Promise.race([scenario, stop.requested.then((cause) => ({ stopped: cause }))]);
    return typeof outcome === "number" ? outcome : exitStatusOf(outcome.stopped);
  } finally {
    await pipeline.stop();
    await downstream?.stop();
    if (stop.cause) process.stderr.write(`stopped; removed ${pipeline.codeDir ?? "nothing"}\n`);
    stop.dispose();
  }
}

/** Runs the scenario, prints the summary and writes the report; the exit status the summary calls for. */
async function runAndReport(
  pipeline: LocalPipeline,
  timeline: Timeline,
  options: CliOptions,
): Promise<number> {
  const tty = process.stderr.isTTY === true;
  let lastPrinted = 0;
  let lastProgress: Progress | undefined;
  // Sampled while the scenario runs, for the report's charts.
  const slow = countSlowRequests();
  timeline.begin();
  const sampler = setInterval(() => timeline.sample(counters(pipeline, lastProgress)), timeline.intervalMs);
  const summary = await runScenario(pipeline, buildScenario(options.scenario), {
    environment: options.env,
    timeScale: options.timeScale,
    timeoutMs: options.timeoutMs,
    onProgress: (p) => {
      lastProgress = p;
      if (tty) process.stderr.write(`\r${progressLine(p)}   `);
      else if (p.elapsedMs - lastPrinted >= 5_000) {
        lastPrinted = p.elapsedMs;
        process.stderr.write(`${progressLine(p)}\n`);
      }
    },
  }).finally(() => {
    clearInterval(sampler);
    slow.restore();
  });
  // Not a terminal: a line every 5 s, and the last count when it was not printed, so that a run done
  // within 5 s (a small scenario, now that the retry waits are scaled) still says how it ended.
  if (!tty && lastProgress !== undefined && lastProgress.elapsedMs !== lastPrinted) {
    process.stderr.write(`${progressLine(lastProgress)}\n`);
  }
  const slowNote = explainSlowRequests(slow.count());
  if (slowNote) process.stderr.write(`${tty ? "\n" : ""}${slowNote}\n`);
  timeline.sample(counters(pipeline, lastProgress));
  if (tty) process.stderr.write("\n");
  if (options.report !== undefined) {
    const file = isAbsolute(options.report) ? options.report : join(process.cwd(), options.report);
    await writeReport(file, { summary, timeline: timeline.data(), generatedAt: new Date().toISOString() });
    process.stderr.write(`report: ${file}\n`);
  }
  process.stdout.write(options.json ? `${JSON.stringify(summary)}\n` : `${formatSummary(summary)}\n`);
  // 1: inputs lost (a broken promise); 3: out of time with inputs still in flight (not judged).
  if (summary.timedOut) return TIMED_OUT;
  return summary.lost === 0 ? ExitCode.Ok : ExitCode.Failed;
}
