import { wholeNumber } from "@mcp-pipeline/cli";
import type { Check } from "@mcp-pipeline/recovery";
import { resourceNames } from "@mcp-pipeline/settings";
import { unanswered, unreachable } from "../aws-environment.js";
import type { Caller } from "../caller.js";
import { type Context, callerCheck, print, RecoverExit } from "../context.js";
import { printable } from "../printable.js";
import { formatSeconds, pipelineStatus, type Reading, type StatusReport } from "../status.js";
import { pipelineQueues } from "../targets.js";

const shownReading = (r: Reading) =>
  "seconds" in r
    ? `${formatSeconds(r.seconds)}${r.from === "read" ? " (read)" : ""}`
    : `n/a (${r.unavailable})`;

/**
 * `status`: per queue its depth, in flight and oldest message; the FIFO groups stuck behind a job; the
 * processor's iterator age; the alarms that fire. Exit status 0 when nothing needs a person, 4 when
 * something does (each listed under "attention"), 1 when it could not look.
 */
export async function status(context: Context): Promise<number> {
  const options = statusOptions(context.flags);
  const { caller, check } = await callerCheck(context);
  const report = await readStatus(context, options);
  print(context, statusLines(report, caller, check).join("\n"), { caller: caller ?? null, ...report });
  return report.attention.length > 0 ? RecoverExit.Attention : RecoverExit.Ok;
}

interface StatusFlags {
  readonly stuckAfter: number | undefined;
  readonly maxIteratorAge: number;
}

/** The flags, refused before AWS is asked. */
function statusOptions(flags: Context["flags"]): StatusFlags {
  const stuckAfter =
    flags["stuck-after"] === undefined
      ? undefined
      : wholeNumber("stuck-after", flags["stuck-after"], { fallback: 0, min: 1, max: 1_209_600 });
  const maxIteratorAge = wholeNumber("max-iterator-age", flags["max-iterator-age"], {
    fallback: 60,
    min: 1,
    max: 604_800,
  });
  return { stuckAfter, maxIteratorAge };
}

/** The pipeline's queues, then everything the report reads of them, of the table and of CloudWatch. */
async function readStatus(context: Context, options: StatusFlags): Promise<StatusReport> {
  const prefix = context.targets.prefix;
  const queues = await pipelineQueues(context.aws.sqs, context.env, context.targets);
  const cloudwatchUnreachable = unreachable(context.env, "CLOUDWATCH");
  return pipelineStatus(
    context.aws,
    {
      queues,
      ...(context.targets.table ? { table: context.targets.table } : {}),
      ...(prefix
        ? { processorFunction: resourceNames(prefix).functions.processor, alarmPrefix: prefix }
        : {}),
      ...(cloudwatchUnreachable ? { cloudwatchUnreachable } : {}),
      ...(context.io.interrupt ? { interrupt: context.io.interrupt } : {}),
      describeError: (service, error) => unanswered(context.env, service, error),
    },
    {
      now: context.io.now(),
      maxIteratorAgeSeconds: options.maxIteratorAge,
      ...(options.stuckAfter ? { stuckAfterSeconds: options.stuckAfter } : {}),
    },
  );
}

/** The report as on-call reads it: who and where, the queues, the stuck groups, the lag, the alarms, attention. */
function statusLines(report: StatusReport, caller: Caller | undefined, check: Check): string[] {
  return [
    caller ? `account ${caller.account}, region ${caller.region}` : `caller unknown (${check.detail})`,
    ...queueTable(report),
    ...stuckGroupLines(report.stuckGroups),
    ...notStartedLines(report.stuckGroups),
    `processor iterator age: ${shownReading(report.iteratorAge)}`,
    ...cloudWatchLines(report),
    report.attention.length === 0
      ? "all clear"
      : `attention:\n${report.attention.map((a) => `  - ${a}`).join("\n")}`,
  ];
}

function queueTable(report: StatusReport): string[] {
  return [
    `  ${"queue".padEnd(36)} ${"visible".padStart(7)} ${"in flight".padStart(9)} ${"delayed".padStart(7)}  oldest message`,
    ...report.queues.map(
      (q) =>
        `  ${q.name.padEnd(36)} ${String(q.visible).padStart(7)} ${String(q.inFlight).padStart(9)} ${String(q.delayed).padStart(7)}  ${q.visible + q.inFlight + q.delayed === 0 ? "-" : shownReading(q.oldest)}`,
    ),
    ...report.missing.map((m) => `  ${m.queue}: not found (${m.why})`),
    // Why is said once, under attention.
    ...report.unread.map((u) => `  ${u.queue} ${u.role === "dlq" ? "DLQ" : "queue"}: not read`),
  ];
}

function stuckGroupLines(stuck: StatusReport["stuckGroups"]): string[] {
  if ("unavailable" in stuck) return [`stuck FIFO groups: n/a (${stuck.unavailable})`];
  if (stuck.groups.length === 0)
    return [
      `stuck FIFO groups (oldest unfinished call waiting over ${formatSeconds(stuck.afterSeconds)}): none`,
    ];
  return [
    `stuck FIFO groups of ${stuck.queue} (oldest unfinished call waiting over ${formatSeconds(stuck.afterSeconds)}; ${stuck.scanned} calls read):`,
    ...stuck.groups.map(
      (g) =>
        `  ${printable(g.group)}: call ${printable(g.callId)} (${printable(g.tool)}, ${g.status}, ${g.attempts} attempts) waits ${formatSeconds(g.waitingSeconds)}; ${g.unfinished} unfinished in the group${g.status === "dead-lettered" ? " (its last attempt failed: SQS moves it to the DLQ once its visibility timeout passes, then the group goes on)" : ""}`,
    ),
  ];
}

/** Sessions whose calls no worker has started: said only when there are some. */
function notStartedLines(stuck: StatusReport["stuckGroups"]): string[] {
  if (!("notStarted" in stuck) || stuck.notStarted.length === 0) return [];
  return [
    `sessions whose calls no worker has started for over ${formatSeconds(stuck.afterSeconds)}:`,
    ...stuck.notStarted.map(
      (g) =>
        `  ${printable(g.group)}: call ${printable(g.callId)} (${printable(g.tool)}) requested ${formatSeconds(g.waitingSeconds)} ago; ${g.unfinished} unfinished`,
    ),
  ];
}

/** The firing alarms; without CloudWatch, why once for all its figures. */
function cloudWatchLines(report: StatusReport): string[] {
  const alarms = report.alarms;
  return [
    Array.isArray(alarms)
      ? `alarms in ALARM: ${alarms.length === 0 ? "none" : alarms.map((a) => a.name).join(", ")}`
      : `alarms: n/a${report.cloudwatchUnavailable ? "" : ` (${(alarms as { unavailable: string }).unavailable})`}`,
    ...(report.cloudwatchUnavailable
      ? [
          `CloudWatch: n/a (${report.cloudwatchUnavailable}): iterator age, alarms and source queue ages are not checked`,
        ]
      : []),
  ];
}
