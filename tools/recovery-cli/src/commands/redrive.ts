import { shown, UsageError, wholeNumber } from "@mcp-pipeline/cli";
import {
  bodyDigest,
  type Check,
  FailureKind,
  moveMessages,
  moveTaskCheck,
  notChecked,
  peekMessages,
  planRedrive,
  watchReturns,
} from "@mcp-pipeline/recovery";
import { environmentChecks } from "../caller.js";
import { type Context, callerCheck, confirm, listed, maxOf, plannedRun, RecoverExit } from "../context.js";
import { dlqChoice } from "../dlq-choice.js";
import { interruptedStatus } from "../interrupt.js";
import { progressBar } from "../progress.js";
import { formatSeconds } from "../status.js";

const MODES = ["auto", "move-task", "mover"] as const;
const MOVE_TASK_MAX_RATE = 500;
type Mode = (typeof MODES)[number];

/**
 * `redrive`: moves the messages of a DLQ back to its source queue (by default the queue whose redrive policy
 * names it, as StartMessageMoveTask does). First the plan (account, region, DLQ, target, counts by reason)
 * and the checks: the target must be a source of that DLQ and of its type. Then, with --yes or a person's
 * yes, the move; then a watch of the DLQ for what comes straight back (still poison), which fails the run.
 */
export async function redrive(context: Context): Promise<number> {
  const { flags } = context;
  const mode = (flags.mode ?? "auto") as Mode;
  if (!MODES.includes(mode)) throw new UsageError("--mode must be auto, move-task or mover");
  const rate = wholeNumber("rate", flags.rate, { fallback: 100, min: 1, max: 10_000 });
  const max = maxOf(flags);
  const watchSeconds = wholeNumber("watch", flags.watch, { fallback: 20, min: 0, max: 3_600 });
  const selective = max !== undefined || flags.reason !== undefined;
  if (mode === "move-task" && selective)
    throw new UsageError(
      "--max and --reason need the mover (a message move task moves every message): drop --mode move-task",
    );
  // A message move task takes at most 500 a second (§4); auto uses one wherever SQS has them.
  if (mode !== "mover" && !selective && rate > MOVE_TASK_MAX_RATE)
    throw new UsageError(
      `--rate ${rate} is over ${MOVE_TASK_MAX_RATE}, the most a message move task moves a second (MaxNumberOfMessagesPerSecond): pass --rate ${MOVE_TASK_MAX_RATE} or less, or --mode mover`,
    );
  const choice = await dlqChoice(context, "redrive");

  const { caller, check: identity } = await callerCheck(context);
  const plan = await planRedrive(context.aws.sqs, {
    from: choice.from,
    ...(choice.to ? { to: choice.to } : {}),
    flags: choice.flags,
  });
  const checks: Check[] = [
    identity,
    ...plan.checks,
    notChecked(
      "write permissions",
      `sqs:SendMessage on the target and sqs:DeleteMessage and sqs:ChangeMessageVisibility on ${plan.from.name} (or sqs:StartMessageMoveTask) cannot be tried without moving; a denial leaves the messages in the DLQ`,
    ),
  ];
  if (caller)
    checks.push(
      ...environmentChecks(caller, [
        { what: choice.flags.from, arn: plan.from.arn },
        ...(plan.to ? [{ what: "target", arn: plan.to.arn }] : []),
      ]),
    );
  if (mode !== "mover" && !selective) checks.push(await moveTaskCheck(context.aws.sqs, plan.from.arn));
  // What is there, read without taking it (a FIFO DLQ shows the first messages of each group only, §3).
  const signal = context.io.interrupt;
  const interruptible = signal ? { signal } : {};
  const peek = await peekMessages(context.aws.sqs, plan.from.url, { fifo: plan.from.fifo, ...interruptible });
  const reasons = new Map<string, number>();
  for (const m of peek.messages) reasons.set(m.reason, (reasons.get(m.reason) ?? 0) + 1);
  if (flags.reason !== undefined && !reasons.has(flags.reason))
    throw new UsageError(
      peek.complete
        ? `--reason ${shown(flags.reason)} matches no message of ${plan.from.name}; ${reasons.size === 0 ? "it holds none" : `the reasons there are: ${listed(reasons)}`}`
        : `--reason ${shown(flags.reason)} matches no message read in ${plan.from.name} (${reasons.size === 0 ? "none read" : `read: ${listed(reasons)}`}); a FIFO queue shows the first messages of each group, and one behind them moves only once those before it have: redrive them first`,
    );
  const chosen = peek.messages.filter((m) => flags.reason === undefined || m.reason === flags.reason);
  const moving = max === undefined ? chosen.length : Math.min(max, chosen.length);
  const permanent = chosen.filter((m) => m.kind === FailureKind.Permanent);

  const approximate = plan.from.visible + plan.from.inFlight;
  const lines = [
    `redrive ${plan.from.arn}\n     to ${plan.to?.arn ?? "(no target)"}`,
    `  as ${caller ? `account ${caller.account}, region ${caller.region}` : "an unknown caller"}`,
    `  ${peek.messages.length} messages read in the DLQ${peek.complete ? "" : ` (a FIFO queue shows the first of each group; SQS counts about ${approximate})`}${reasons.size > 0 ? `: ${listed(reasons)}` : ""}`,
    `  ${moving}${peek.complete ? "" : " or more"} to move${flags.reason ? ` (reason ${flags.reason})` : ""}${max !== undefined ? ` (--max ${max})` : ""}`,
  ];
  if (permanent.length > 0) {
    const byReason = new Map<string, number>();
    for (const m of permanent) byReason.set(m.reason, (byReason.get(m.reason) ?? 0) + 1);
    lines.push(
      `  ${permanent.length} ${permanent.length === 1 ? "has" : "have"} a permanent reason (${listed(byReason)}): their worker dead-letters them again at once${flags.reason === undefined ? "; --reason max-receives moves only those SQS moved after their receives ran out" : ""}`,
    );
  }
  const run = plannedRun(context, {
    lines,
    checks,
    wouldDo: `${moving}${peek.complete ? "" : " or more"} would be moved to ${plan.to?.name}`,
    data: {
      from: plan.from.arn,
      to: plan.to?.arn ?? null,
      caller: caller ?? null,
      read: peek.messages.length,
      complete: peek.complete,
      approximate,
      byReason: Object.fromEntries(reasons),
      toMove: moving,
      permanent: permanent.length,
    },
  });
  if (run.stopped !== undefined) return run.stopped;
  const { outcome } = run;
  // planRedrive fails a check whenever it finds no target: a refused run has ended above.
  if (plan.to === undefined)
    return outcome(RecoverExit.Refused, "refused, nothing done: no target", { refused: true });
  if (moving === 0 && peek.complete) return outcome(RecoverExit.Ok, "nothing to move", { moved: 0 });

  const answer = await confirm(
    context,
    `Move ${moving}${peek.complete ? "" : " or more"} message${moving === 1 && peek.complete ? "" : "s"} from ${plan.from.name} to ${plan.to.name}?`,
  );
  if (answer !== "given")
    return outcome(RecoverExit.Refused, "nothing done", { refused: true, consent: answer });
  const tty = context.io.terminal.interactive;
  let lastLine = 0;
  const summary = await moveMessages(context.aws.sqs, {
    dlqUrl: plan.from.url,
    sourceUrl: plan.to.url,
    mode,
    ratePerSecond: rate,
    ...(max !== undefined ? { max } : {}),
    ...(flags.reason !== undefined ? { reason: flags.reason } : {}),
    ...interruptible,
    // The total is SQS's approximate count when the move started: the bar is a guide, the summary counts.
    onProgress: (moved, total) => {
      if (tty) context.io.err(`\r${progressBar(moved, Math.max(total, moved))}`);
      else if (moved - lastLine >= 100 || (moved > 0 && lastLine === 0)) {
        lastLine = moved;
        context.io.err(`moved ${moved} (about ${total} were waiting)`);
      }
    },
  });
  if (tty) context.io.err("");
  // The mover knows what it moved; for a move task, what the DLQ held before it started.
  const digests = summary.mode === "mover" ? summary.movedDigests : chosen.map((m) => bodyDigest(m.body));
  if (summary.interrupted) {
    const left =
      summary.mode === "move-task"
        ? `the message move task ${summary.taskHandle ?? ""} goes on in SQS: aws sqs cancel-message-move-task --task-handle ${summary.taskHandle ?? "<handle>"} stops it`
        : `the rest are in the DLQ, visible again: run the same command again to move them (what moved is not moved twice)`;
    return outcome(
      interruptedStatus(signal),
      `interrupted: ${summary.moved} moved back to ${plan.to.name} (${summary.mode}) before the stop, ${summary.failed} refused or not taken; ${left}`,
      { summary: { ...summary, movedDigests: undefined }, interrupted: true },
    );
  }
  const returns =
    watchSeconds > 0 && summary.moved > 0
      ? await watchReturns(context.aws.sqs, plan.from.url, {
          since: summary.startedAt,
          digests: digests.slice(0, summary.moved),
          timeoutMs: watchSeconds * 1000,
          fifo: plan.from.fifo,
          ...interruptible,
        })
      : undefined;
  const moved = `${summary.moved} moved back to ${plan.to.name} (${summary.mode}), ${summary.failed} refused or not taken (left in the DLQ), ${summary.arrivedAfterStart} arrived in the DLQ after the start (left for the next run)${summary.leftByChoice > 0 ? `, ${summary.leftByChoice} left by --max or --reason` : ""}`;
  const back =
    returns === undefined
      ? watchSeconds === 0
        ? "not watched for returns (--watch 0)"
        : ""
      : returns.cameBack > 0
        ? `${returns.cameBack} of them came straight back to the DLQ within ${formatSeconds(returns.watchedMs / 1000)} (${listed(returns.byReason)}): still failing; fix the cause (peek shows them), then redrive again`
        : `none came back to the DLQ in ${formatSeconds(returns.watchedMs / 1000)} of watching${returns.interrupted ? " (the watch was interrupted: peek --queue shows what is there)" : ""}`;
  const ok = summary.failed === 0 && (returns?.cameBack ?? 0) === 0;
  const status =
    returns?.interrupted && signal ? interruptedStatus(signal) : ok ? RecoverExit.Ok : RecoverExit.Failed;
  return outcome(status, [moved, back].filter(Boolean).join("\n"), {
    summary: { ...summary, movedDigests: undefined },
    cameBack: returns?.cameBack ?? null,
    cameBackByReason: returns?.byReason ?? null,
  });
}
