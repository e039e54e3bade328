/**
 * The main job (`npm start`): the whole pipeline on one machine. See `npm start -- --help`.
 */
import { join } from "node:path";
import { loadSettings, SettingsError } from "@mcp-pipeline/settings";
import { CliError, type CliOptions, parseCli, USAGE } from "./cli.ts";
import { endpointsFromEnvironment, LocalPipeline } from "./pipeline.ts";
import { type Progress, runScenario, type Summary } from "./run-scenario.ts";
import { buildScenario, STUCK_PREFIX } from "./scenario.ts";

const root = join(import.meta.dirname, "../..");

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

export function formatSummary(s: Summary): string {
  const rows: [string, string][] = [
    ["environment", `${s.environment} (durations ÷${s.timeScale})`],
    ["events in (stream)", String(s.eventsIn)],
    ["stream records processed", String(s.streamRecordsProcessed)],
    ["jobs in (queues)", String(s.jobsIn)],
    ["applied", String(s.applied)],
    ["duplicates skipped", String(s.duplicatesSkipped)],
    ["quarantined", String(s.quarantined)],
    ["retried", String(s.retried)],
    ["bisected", String(s.bisected)],
    ["sent to DLQ", String(s.sentToDlq)],
    ["to on-failure destination", String(s.toFailureDestination)],
    ["stored by dlq-redrive", String(s.storedByRedrive)],
    ["replayed after recovery", String(s.replayed)],
    ["lost", String(s.lost)],
    ["latency p50 / p99 (job → result)", `${s.latencyMs.p50} ms / ${s.latencyMs.p99} ms`],
    ["max iterator age", `${s.maxIteratorAgeMs} ms`],
    ["duration", `${(s.durationMs / 1000).toFixed(1)} s`],
  ];
  for (const [name, f] of Object.entries(s.functions)) {
    rows.push([
      `  ${name}`,
      `${f.invocations} invocations, ${f.errors} errors, ${f.timeouts} timeouts, ${f.coldStarts} cold starts, ${f.maxMemoryUsedMb} MB heap`,
    ]);
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`);
  const rule = "-".repeat(Math.max(...lines.map((l) => l.length)));
  const missing =
    s.missing.length > 0 ? `\nnot accounted for (first ${s.missing.length}): ${s.missing.join(", ")}` : "";
  return [rule, ...lines, rule].join("\n") + missing;
}

function progressLine(p: Progress): string {
  return `[${(p.elapsedMs / 1000).toFixed(1)}s] accounted ${p.accounted}/${p.expected} · applied ${p.applied} · quarantined ${p.quarantined} · DLQ ${p.dlq}`;
}

async function serve(pipeline: LocalPipeline, options: CliOptions): Promise<void> {
  const n = pipeline.names;
  const lines = [
    `AWS_ENDPOINT_URL_KINESIS=${pipeline.endpoints.kinesis}`,
    `AWS_ENDPOINT_URL_SQS=${pipeline.endpoints.sqs}`,
    `AWS_ENDPOINT_URL_S3=${pipeline.endpoints.s3}`,
    `AWS_ENDPOINT_URL_DYNAMODB=${pipeline.endpoints.dynamodb}`,
    `AWS_REGION=${pipeline.region}`,
    "AWS_ACCESS_KEY_ID=local",
    "AWS_SECRET_ACCESS_KEY=local",
    `STREAM_NAME=${n.stream}`,
    `TOOL_CALLS_TABLE=${n.toolCallsTable}`,
    `DEDUPE_TABLE=${n.dedupeTable}`,
    `QUARANTINE_BUCKET=${n.quarantineBucket}`,
    `RESULTS_BUCKET=${n.resultsBucket}`,
    `TOOL_QUEUE_URL=${pipeline.queues.tool.url}`,
    `TOOL_DLQ_URL=${pipeline.queues.toolDlq.url}`,
    `FIFO_QUEUE_URL=${pipeline.queues.fifo.url}`,
    `FIFO_DLQ_URL=${pipeline.queues.fifoDlq.url}`,
    `FAILURE_QUEUE_URL=${pipeline.queues.failure.url}`,
    `FAILURE_DLQ_URL=${pipeline.queues.failureDlq.url}`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  process.stderr.write(
    `serving environment ${options.env} (durations ÷${options.timeScale}); e.g. in another shell:\n` +
      `  export $(npm start --silent -- --serve | head -n ${lines.length})  # or copy the lines above\n` +
      `  aws kinesis put-record --stream-name ${n.stream} --partition-key s1 --data "$(echo '{...}' | base64)"\n` +
      "press Ctrl-C to stop\n",
  );
  process.stdout.write("ready\n");
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
}

export async function main(argv: readonly string[]): Promise<number> {
  let options: CliOptions;
  try {
    options = parseCli(argv);
  } catch (error) {
    if (error instanceof CliError) {
      process.stderr.write(`${error.message}\n\n${USAGE}\n`);
      return 2;
    }
    throw error;
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let settings: Awaited<ReturnType<typeof loadSettings>>;
  try {
    settings = await loadSettings(root, options.env);
  } catch (error) {
    if (error instanceof SettingsError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  }

  const endpoints = endpointsFromEnvironment(process.env);
  const pipeline = new LocalPipeline({
    settings,
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
      return 0;
    }
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    process.stderr.write(
      `${endpoints ? "using AWS_ENDPOINT_URL_* endpoints" : "emulators up"}; environment ${options.env}, durations ÷${options.timeScale}\n`,
    );
    const tty = process.stderr.isTTY === true;
    let lastPrinted = 0;
    const summary = await runScenario(pipeline, buildScenario(options.scenario), {
      environment: options.env,
      timeScale: options.timeScale,
      timeoutMs: options.timeoutMs,
      onProgress: (p) => {
        if (tty) process.stderr.write(`\r${progressLine(p)}   `);
        else if (p.elapsedMs - lastPrinted >= 5_000) {
          lastPrinted = p.elapsedMs;
          process.stderr.write(`${progressLine(p)}\n`);
        }
      },
    });
    if (tty) process.stderr.write("\n");
    process.stdout.write(options.json ? `${JSON.stringify(summary)}\n` : `${formatSummary(summary)}\n`);
    return summary.lost === 0 ? 0 : 1;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    if (!interrupted) await pipeline.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
