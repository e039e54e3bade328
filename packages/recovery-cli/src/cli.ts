/**
 * `npm run recover -- <command>`: inspect the quarantine, replay it into the stream, redrive SQS DLQs.
 * Reaches AWS (or LocalStack, or `npm start -- --serve`) through the standard variables: AWS_REGION,
 * credentials, AWS_ENDPOINT_URL_*.
 */
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { ExitCode, parseCommandLine, refuseCommandLine, UsageError, wholeNumber } from "@mcp-pipeline/cli";
import { readQuarantineRecord } from "@mcp-pipeline/quarantine";
import {
  countQuarantine,
  listQuarantine,
  moveMessages,
  type QuarantineFilter,
  replayedAt,
  replayQuarantine,
} from "@mcp-pipeline/recovery";
import { QUEUE_KEYS, queueSuffix, queueUrlVariables } from "@mcp-pipeline/settings";

export const USAGE = `npm run recover -- <command> [options]

Commands
  inspect                 counts of quarantined records by reason, shard and day
  show KEY                one quarantined record, its data decoded
  replay                  put quarantined records back into the stream (original partition keys and
                          bytes, order kept per key) and mark each one, so a second replay skips it
  redrive                 move the messages an SQS DLQ holds when it starts back to its source queue,
                          once each (StartMessageMoveTask, or a mover that keeps FIFO groups where it
                          is missing); what arrives after the start (still poison) stays for the next
                          run. With --dry-run, counts the messages by receiving them (then releases
                          them), since SQS's ApproximateNumberOfMessages lags

Filters (inspect, replay)
  --reason CODE           e.g. bad-json, schema-violation, RetryAttemptsExhausted, RecordAgeExceeded
  --since ISO, --until ISO   arrival time range, e.g. 2026-11-30T10:00:00Z
  --session ID            one session (partition key)
  --shard ID              one shard

Options
  --bucket NAME           quarantine bucket (default $QUARANTINE_BUCKET)
  --stream NAME           stream to replay into (default $STREAM_NAME)
  --from URL, --to URL    redrive: the DLQ and its source queue
  --queue NAME            redrive: tool-jobs, session-jobs or stream-failures, with URLs from the variables
                          printed by \`npm start -- --serve\` (TOOL_JOBS_DLQ_URL and TOOL_JOBS_QUEUE_URL, ...)
  --mode auto|move-task|mover   redrive: how to move (default auto)
  --dry-run               say what would happen, change nothing
  --rate N                records (replay) or messages (redrive) per second, at most (default 100)
  --json                  print the result as JSON
  -h, --help

Exit status: 0 done, 1 failed, 2 bad command line.`;

/** `--queue session-jobs` -> the variables SESSION_JOBS_DLQ_URL and SESSION_JOBS_QUEUE_URL. */
const QUEUES: Readonly<Record<string, { readonly queue: string; readonly dlq: string }>> = Object.fromEntries(
  QUEUE_KEYS.map((key) => [queueSuffix(key), queueUrlVariables(key)]),
);

function instant(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (!/^\d{4}-\d\d-\d\dT/.test(value) || Number.isNaN(ms))
    throw new UsageError(`--${name} must be an ISO instant, got "${value}"`);
  return ms;
}

function progressBar(done: number, total: number): string {
  const width = 30;
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total}`;
}

export async function main(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    return refuseCommandLine(error, USAGE);
  }
  const { values: v, positionals } = parsed;
  if (v.help || positionals.length === 0) {
    process.stdout.write(`${USAGE}\n`);
    return v.help ? ExitCode.Ok : ExitCode.Usage;
  }
  const [command, ...rest] = positionals;
  const out = (text: string, json: unknown) =>
    process.stdout.write(v.json ? `${JSON.stringify(json)}\n` : `${text}\n`);
  const tty = process.stderr.isTTY === true;
  const progress = (done: number, total: number) => {
    if (tty) process.stderr.write(`\r${progressBar(done, total)}`);
    else if (done === total) process.stderr.write(`${progressBar(done, total)}\n`);
  };
  try {
    const bucket = () => {
      const b = v.bucket ?? env.QUARANTINE_BUCKET;
      if (!b) throw new UsageError("no quarantine bucket: pass --bucket or set QUARANTINE_BUCKET");
      return b;
    };
    const rate = wholeNumber("rate", v.rate, { fallback: 100, min: 1, max: 10_000 });
    const filter: QuarantineFilter = {
      ...(v.reason !== undefined ? { reason: v.reason } : {}),
      ...(v.session !== undefined ? { session: v.session } : {}),
      ...(v.shard !== undefined ? { shardId: v.shard } : {}),
      ...(instant("since", v.since) !== undefined ? { since: instant("since", v.since) as number } : {}),
      ...(instant("until", v.until) !== undefined ? { until: instant("until", v.until) as number } : {}),
    };

    switch (command) {
      case "inspect": {
        const counts = countQuarantine(await listQuarantine(s3Client({}, env), bucket(), filter));
        const table = (title: string, rows: Record<string, number>) =>
          [
            `${title}:`,
            ...Object.entries(rows)
              .sort()
              .map(([k, n]) => `  ${k.padEnd(40)} ${n}`),
          ].join("\n");
        out(
          [
            `${counts.total} quarantined records` +
              (counts.copies > 0
                ? ` (and ${counts.copies} objects holding one of them again: quarantined again after a replay, or sent twice; counted once)`
                : ""),
            table("by reason", counts.byReason),
            table("by shard", counts.byShard),
            table("by day", counts.byDay),
          ].join("\n"),
          counts,
        );
        return ExitCode.Ok;
      }
      case "show": {
        const key = rest[0];
        if (!key)
          throw new UsageError(
            "show needs the object key, e.g. kinesis/<stream>/2026/11/30/<shard>/<seq>.json",
          );
        const s3 = s3Client({}, env);
        const record = await readQuarantineRecord(s3, bucket(), key);
        const bytes = Buffer.from(record.data, "base64");
        const text = bytes.toString("utf8");
        let decoded: unknown = text;
        try {
          decoded = JSON.parse(text);
        } catch {
          // Not JSON: shown as text (or base64 when not UTF-8), which is often why it was quarantined.
          if (Buffer.from(text, "utf8").compare(bytes) !== 0) decoded = { base64: record.data };
        }
        const marked = await replayedAt(s3, bucket(), key);
        out(JSON.stringify({ ...record, data: decoded, replayedAt: marked ?? null }, null, 2), {
          ...record,
          decoded,
          replayedAt: marked ?? null,
        });
        return ExitCode.Ok;
      }
      case "replay": {
        const stream = v.stream ?? env.STREAM_NAME;
        if (!stream) throw new UsageError("no stream: pass --stream or set STREAM_NAME");
        const s3 = s3Client({}, env);
        const entries = await listQuarantine(s3, bucket(), filter);
        const summary = await replayQuarantine(s3, kinesisClient(), bucket(), entries, {
          streamName: stream,
          dryRun: v["dry-run"] ?? false,
          ratePerSecond: rate,
          onProgress: progress,
        });
        if (tty) process.stderr.write("\n");
        out(
          summary.dryRun
            ? `dry run: ${summary.matched} matched, ${summary.alreadyReplayed} already replayed, ${summary.matched - summary.alreadyReplayed} would be replayed into ${stream}`
            : `${summary.replayed} replayed into ${stream}, ${summary.alreadyReplayed} already replayed before (of ${summary.matched} matched)`,
          summary,
        );
        return ExitCode.Ok;
      }
      case "redrive": {
        const named = v.queue ? QUEUES[v.queue] : undefined;
        if (v.queue && !named)
          throw new UsageError(`--queue must be one of ${Object.keys(QUEUES).join(", ")}`);
        const from = v.from ?? (named ? env[named.dlq] : undefined);
        const to = v.to ?? (named ? env[named.queue] : undefined);
        if (!from || !to)
          throw new UsageError(
            "redrive needs --from and --to (or --queue with the variables npm start --serve prints)",
          );
        const mode = v.mode ?? "auto";
        if (mode !== "auto" && mode !== "move-task" && mode !== "mover")
          throw new UsageError(`--mode must be auto, move-task or mover`);
        let lastLine = 0;
        const summary = await moveMessages(sqsClient(), {
          dlqUrl: from,
          sourceUrl: to,
          dryRun: v["dry-run"] ?? false,
          mode,
          ratePerSecond: rate,
          // The total is SQS's approximate count when the move started: the bar is a guide, the
          // summary counts what was moved.
          onProgress: (moved, total) => {
            if (tty) process.stderr.write(`\r${progressBar(moved, Math.max(total, moved))}`);
            else if (moved - lastLine >= 100 || (moved > 0 && lastLine === 0)) {
              lastLine = moved;
              process.stderr.write(`moved ${moved} (about ${total} were waiting)\n`);
            }
          },
        });
        if (tty) process.stderr.write("\n");
        out(
          summary.mode === "dry-run"
            ? summary.waitingIsApproximate
              ? `dry run: about ${summary.waiting} messages waiting in ${from} (SQS's approximate figure, which lags; a FIFO queue cannot be counted by receiving)`
              : `dry run: ${summary.waiting} messages waiting in ${from} (counted; SQS's approximate figure says ${summary.approximateWaiting})`
            : `${summary.moved} moved back to ${to} (${summary.mode}), ${summary.failed} refused or not taken (left in the DLQ), ${summary.arrivedAfterStart} arrived in the DLQ after the start (left for the next run)`,
          summary,
        );
        return summary.failed === 0 ? ExitCode.Ok : ExitCode.Failed;
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof UsageError) return refuseCommandLine(error, USAGE);
    process.stderr.write(`${(error as Error).name}: ${(error as Error).message}\n`);
    return ExitCode.Failed;
  }
}

function parse(argv: readonly string[]) {
  return parseCommandLine(argv, {
    allowPositionals: true,
    options: {
      reason: { type: "string" },
      since: { type: "string" },
      until: { type: "string" },
      session: { type: "string" },
      shard: { type: "string" },
      bucket: { type: "string" },
      stream: { type: "string" },
      from: { type: "string" },
      to: { type: "string" },
      queue: { type: "string" },
      mode: { type: "string" },
      "dry-run": { type: "boolean" },
      rate: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}
