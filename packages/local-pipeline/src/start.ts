/**
 * The main job (`npm start`): the whole pipeline on one machine. See `npm start -- --help`.
 */
import { readdir, stat } from "node:fs/promises";
import { isAbsolute, join, relative } from "node:path";
import { ExitCode, refuseCommandLine } from "@mcp-pipeline/cli";
import { loadSettings, SettingsError, settingsFile } from "@mcp-pipeline/settings";
import { type CliOptions, parseCli, USAGE } from "./cli.js";
import { endpointsFromEnvironment, LocalPipeline } from "./pipeline.js";
import { writeReport } from "./report.js";
import { type Progress, runScenario } from "./run-scenario.js";
import { buildScenario, STUCK_PREFIX } from "./scenario.js";
import { serveEnvironment } from "./serve-env.js";
import { countSlowRequests, explainSlowRequests } from "./slow-requests.js";
import { formatSummary, progressLine } from "./summary-format.js";
import { type Counters, Timeline } from "./timeline.js";

const root = join(import.meta.dirname, "../../..");

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
  "until grep -qsx '# ready' /tmp/stack.env; do sleep 1; done",
  "set -a; . /tmp/stack.env; set +a",
  'aws kinesis put-record --stream-name "$STREAM_NAME" --partition-key s1 --data fileb:///tmp/event.json',
] as const;

async function serve(pipeline: LocalPipeline, options: CliOptions): Promise<void> {
  process.stdout.write(`${serveEnvironment(pipeline, options.env).join("\n")}\n`);
  // The same lines as docs/local-runtime.md (operator-docs.test.ts checks): `export $(... | head)` would
  // hang, since the stack keeps running and the command substitution waits for it.
  process.stderr.write(
    `serving environment ${options.env} (durations ÷${options.timeScale}), region ${pipeline.region}; in another shell:\n` +
      SERVE_HINT.map((line) => `  ${line}\n`).join("") +
      "press Ctrl-C to stop\n",
  );
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
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

export async function main(argv: readonly string[]): Promise<number> {
  let options: CliOptions;
  try {
    options = parseCli(argv, process.env);
  } catch (error) {
    return refuseCommandLine(error, USAGE);
  }
  const env = process.env;
  if (
    options.json &&
    // Under npm start itself, not under a test runner that npx or npm test started.
    env.npm_lifecycle_event === "start" &&
    env.npm_lifecycle_script?.includes("local-pipeline/bin/start.ts") &&
    env.npm_config_loglevel !== "silent" &&
    env.npm_config_json !== "true"
  )
    // npm wrote its banner ("> start", the script) on stdout before this process started: say how to avoid it.
    process.stderr.write(
      "note: npm printed its banner on stdout before the JSON; for JSON alone: npm start --silent -- --json\n",
    );
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.Ok;
  }
  const known = await environments();
  if (!known.includes(options.env)) {
    process.stderr.write(
      `no environment "${options.env}": there is no ${relative(root, settingsFile(root, options.env))}\n` +
        `environments: ${known.join(", ")} (e.g. --env ${known[0] ?? "dev"})\n`,
    );
    return ExitCode.Usage;
  }
  let settings: Awaited<ReturnType<typeof loadSettings>>;
  try {
    settings = await loadSettings(root, options.env);
  } catch (error) {
    if (error instanceof SettingsError) {
      process.stderr.write(`${error.message}\n`);
      return ExitCode.Usage;
    }
    throw error;
  }

  const endpoints = endpointsFromEnvironment(process.env);
  const timeline = new Timeline();
  const pipeline = new LocalPipeline({
    settings,
    // The environment's own region (dev: eu-west-1), so names, ARNs and clients match what it deploys.
    region: settings.region,
    onKinesisEvent: timeline.onKinesisEvent,
    partialSplitAccounting: options.partialSplitAccounting,
    timeScale: options.timeScale,
    distDir: options.distDir ?? join(root, "dist"),
    ...(endpoints ? { endpoints } : {}),
    ...((options.scenario.stuckRate ?? 0) > 0 ? { processorDynamoDbFault: stuckWrites } : {}),
    onLog: options.verbose ? (fn, line) => process.stderr.write(`${fn}: ${line}\n`) : () => {},
  });
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
    process.stderr.write("\nstopping...\n");
    void pipeline.stop().then(() => process.exit(130));
  };
  try {
    await pipeline.start();
    if (options.serve) {
      await serve(pipeline, options);
      return ExitCode.Ok;
    }
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    process.stderr.write(
      `${endpoints ? "using AWS_ENDPOINT_URL_* endpoints" : "emulators up"}; environment ${options.env}, durations ÷${options.timeScale}\n`,
    );
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
    if (summary.timedOut) return 3;
    return summary.lost === 0 ? ExitCode.Ok : ExitCode.Failed;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    if (!interrupted) await pipeline.stop();
  }
}
