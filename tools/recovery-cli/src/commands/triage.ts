import { FailureKind } from "@mcp-pipeline/recovery";
import { unanswered } from "../aws-environment.js";
import { ageOf, type Context, callerCheck, print, RecoverExit } from "../context.js";
import { commandFor } from "../next-command.js";
import { pipelineQueues, quarantineBucket } from "../targets.js";
import { triage as triageReport } from "../triage.js";

/**
 * `triage`: the quarantine and every DLQ in one view, grouped by reason, each group permanent or retryable
 * with the command to run next. Exit status 4 when anything waits, 0 when nothing does.
 */
export async function triage(context: Context): Promise<number> {
  const { caller, check } = await callerCheck(context);
  const queues = await pipelineQueues(context.aws.sqs, context.env, context.targets);
  const bucket = quarantineBucket(context.targets, caller?.account);
  const report = await triageReport(context.aws, {
    ...(bucket ? { bucket } : {}),
    dlqs: queues.flatMap((q) => (q.dlqUrl ? [{ name: { key: q.name }, url: q.dlqUrl, fifo: q.fifo }] : [])),
    ...(caller ? { expectedBucketOwner: caller.account } : {}),
    ...(context.io.interrupt ? { interrupt: context.io.interrupt } : {}),
    describeError: (service, error) => unanswered(context.env, service, error),
  });
  const header = `${caller ? `account ${caller.account}, region ${caller.region}` : `caller unknown (${check.detail})`}`;
  const missing = [
    ...(bucket ? [] : ["quarantine: no bucket (pass --bucket, set QUARANTINE_BUCKET, or give the prefix)"]),
    ...queues.filter((q) => q.dlqUrl === undefined).map((q) => `${q.name} DLQ: ${q.missing}`),
    ...report.unread.map((u) => `${u.source}: ${u.why}`),
  ];
  const where = {
    ...(context.flags.prefix !== undefined ? { prefix: context.flags.prefix } : {}),
    ...(context.flags.bucket !== undefined ? { bucket: context.flags.bucket } : {}),
    ...(context.flags.stream !== undefined ? { stream: context.flags.stream } : {}),
  };
  const rows = report.groups.map((g) => {
    const source = g.where === "quarantine" ? "quarantine" : `${g.source} DLQ`;
    const count = `${g.count}${g.partial ? "+" : ""}`;
    const again = g.givenUpAgain > 0 ? `, ${g.givenUpAgain} failed again after a replay` : "";
    return `${source.padEnd(22)} ${g.reason.padEnd(24)} ${g.kind.padEnd(9)} ${count.padStart(6)}  oldest ${ageOf(context, g.oldestAt)} ago${again}\n    next: ${commandFor(g.next, where)}`;
  });
  const permanent = report.groups.filter((g) => g.kind === FailureKind.Permanent).length;
  const lines = [
    header,
    report.groups.length === 0
      ? missing.length > 0
        ? "nothing waits in what was read; some was not read (below): what waits there is unknown"
        : "nothing waits: the quarantine and the DLQs hold nothing to recover"
      : `${report.groups.length} groups wait (${report.groups.length - permanent} retryable: fix the cause, then the command; ${permanent} permanent: the input itself is wrong, look at it first)`,
    ...rows,
    ...report.approximate
      .filter((a) => a.approximate > a.seen)
      .map(
        (a) =>
          `${a.source} DLQ is FIFO: ${a.seen} messages read, SQS counts about ${a.approximate} (a read sees the first of each group)`,
      ),
    ...(report.unreadable.length > 0
      ? [
          `${report.unreadable.length} quarantine objects could not be read (inspect lists them; look with aws s3 cp):`,
          ...report.unreadable.map((u) => `  ${u.key}: ${u.error.name}`),
        ]
      : []),
    ...(report.replayed > 0
      ? [`${report.replayed} quarantined records were replayed and have not failed again`]
      : []),
    ...missing.map((m) => `not read: ${m}`),
  ];
  // What could not be read may hold failures: unknown is not "nothing needs a person".
  const waiting = report.groups.length > 0 || report.unreadable.length > 0 || missing.length > 0;
  print(context, lines.join("\n"), {
    caller: caller ?? null,
    groups: report.groups.map((g) => ({ ...g, next: commandFor(g.next, where) })),
    unreadable: report.unreadable,
    replayed: report.replayed,
    approximate: report.approximate,
    notRead: missing,
  });
  return waiting ? RecoverExit.Attention : RecoverExit.Ok;
}
