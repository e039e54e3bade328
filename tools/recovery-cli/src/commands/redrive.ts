import { shown, UsageError, wholeNumber } from "@mcp-pipeline/cli";
import {
  bodyDigest,
  type Check,
  FailureKind,
  type MoveSummary,
  moveMessages,
  moveTaskCheck,
  notChecked,
  peekMessages,
  planRedrive,
  type RedrivePlan,
  type Returns,
  watchReturns,
} from "@mcp-pipeline/recovery";
import { type Caller, environmentChecks } from "../caller.js";
import { type Context, callerCheck, confirm, listed, maxOf, plannedRun, RecoverExit } from "../context.js";
import { type DlqChoice, dlqChoice } from "../dlq-choice.js";
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
  const options = redriveOptions(context.flags);
  const choice = await dlqChoice(context, "redrive");
  const { caller, check: identity } = await callerCheck(context);
  const plan = await planRedrive(context.aws.sqs, {
    from: choice.from,
    ...(choice.to ? { to: choice.to } : {}),
    flags: choice.flags,
  });
  const checks = await redriveChecks(context, choice, plan, { caller, identity }, options);
  const read = await readDlq(context, plan, options.max);
  const run = plannedRun(context, {
    lines: planLines(context.flags, plan, caller, read, options),
    checks,
    wouldDo: `${read.moving}${read.peek.complete ? "" : " or more"} would be moved to ${plan.to?.name}`,
    data: {
      from: plan.from.arn,
      to: plan.to?.arn ?? null,
      caller: caller ?? null,
      read: read.peek.messages.length,
      complete: read.peek.complete,
      approximate: read.approximate,
      byReason: Object.fromEntries(read.reasons),
      toMove: read.moving,
      permanent: read.permanent.length,
    },
  });
  if (run.stopped !== undefined) return run.stopped;
  const { outcome } = run;
  // planRedrive fails a check whenever it finds no target: a refused run has ended above.
  if (plan.to === undefined)
    return outcome(RecoverExit.Refused, "refused, nothing done: no target", { refused: true });
  if (read.moving === 0 && read.peek.complete)
    return outcome(RecoverExit.Ok, "nothing to move", { moved: 0 });

  const answer = await confirm(
    context,
    `Move ${read.moving}${read.peek.complete ? "" : " or more"} message${read.moving === 1 && read.peek.complete ? "" : "s"} from ${plan.from.name} to ${plan.to.name}?`,
  );
  if (answer !== "given")
    return outcome(RecoverExit.Refused, "nothing done", { refused: true, consent: answer });
  const summary = await move(context, plan.from.url, plan.to.url, options);
  // The mover knows what it moved; for a move task, what the DLQ held before it started.
  const digests =
    summary.mode === "mover" ? summary.movedDigests : read.chosen.map((m) => bodyDigest(m.body));
  if (summary.interrupted) return interruptedOutcome(outcome, context.io.interrupt, summary, plan.to.name);
  const returns = await watchFor(context, plan, summary, digests, options);
  return movedOutcome(outcome, context.io.interrupt, plan.to.name, summary, returns, options.watchSeconds);
}

type Outcome = ReturnType<typeof plannedRun>["outcome"];

interface RedriveOptions {
  readonly mode: Mode;
  readonly rate: number;
  readonly max: number | undefined;
  readonly watchSeconds: number;
  /** --max or --reason: only the mover can leave messages behind. */
  readonly selective: boolean;
}

/** The flags, read and refused before anything is asked of AWS. */
function redriveOptions(flags: Context["flags"]): RedriveOptions {
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
  return { mode, rate, max, watchSeconds, selective };
}

/** The caller, the plan's own checks, what cannot be tried without moving, the environment, the move task. */
async function redriveChecks(
  context: Context,
  choice: DlqChoice,
  plan: RedrivePlan,
  who: { readonly caller: Caller | undefined; readonly identity: Check },
  options: RedriveOptions,
): Promise<Check[]> {
  const { caller } = who;
  const checks: Check[] = [
    who.identity,
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
  if (options.mode !== "mover" && !options.selective)
    checks.push(await moveTaskCheck(context.aws.sqs, plan.from.arn));
  return checks;
}

/**
 * What is there, read without taking it (a FIFO DLQ shows the first messages of each group only, §3):
 * the count by reason, what --reason chooses, how many --max lets move, which have a permanent reason.
 */
async function readDlq(context: Context, plan: RedrivePlan, max: number | undefined) {
  const { flags } = context;
  const signal = context.io.interrupt;
  const peek = await peekMessages(context.aws.sqs, plan.from.url, {
    fifo: plan.from.fifo,
    ...(signal ? { signal } : {}),
  });
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
  return { peek, reasons, chosen, moving, permanent, approximate: plan.from.visible + plan.from.inFlight };
}

/** The plan as printed: where from and to, as whom, what was read, what moves, what will come back. */
function planLines(
  flags: Context["flags"],
  plan: RedrivePlan,
  caller: Caller | undefined,
  read: Awaited<ReturnType<typeof readDlq>>,
  options: RedriveOptions,
): string[] {
  const { peek, reasons, moving, permanent, approximate } = read;
  const { max } = options;
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
  return lines;
}

/** The move itself, with its progress on stderr: a bar at a terminal, a line every 100 otherwise. */
async function move(
  context: Context,
  dlqUrl: string,
  sourceUrl: string,
  options: RedriveOptions,
): Promise<MoveSummary> {
  const { flags } = context;
  const signal = context.io.interrupt;
  const tty = context.io.terminal.interactive;
  let lastLine = 0;
  const summary = await moveMessages(context.aws.sqs, {
    dlqUrl,
    sourceUrl,
    mode: options.mode,
    ratePerSecond: options.rate,
    ...(options.max !== undefined ? { max: options.max } : {}),
    ...(flags.reason !== undefined ? { reason: flags.reason } : {}),
    ...(signal ? { signal } : {}),
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
  return summary;
}

/** Stopped by a person: what moved, and how to go on (a move task goes on in SQS; the mover's rest waits). */
function interruptedOutcome(
  outcome: Outcome,
  signal: AbortSignal | undefined,
  summary: MoveSummary,
  target: string,
): number {
  const left =
    summary.mode === "move-task"
      ? `the message move task ${summary.taskHandle ?? ""} goes on in SQS: aws sqs cancel-message-move-task --task-handle ${summary.taskHandle ?? "<handle>"} stops it`
      : `the rest are in the DLQ, visible again: run the same command again to move them (what moved is not moved twice)`;
  return outcome(
    interruptedStatus(signal),
    `interrupted: ${summary.moved} moved back to ${target} (${summary.mode}) before the stop, ${summary.failed} refused or not taken; ${left}`,
    { summary: { ...summary, movedDigests: undefined }, interrupted: true },
  );
}

/** The DLQ watched for what was moved coming straight back (still poison), unless --watch 0 or nothing moved. */
async function watchFor(
  context: Context,
  plan: RedrivePlan,
  summary: MoveSummary,
  digests: readonly string[],
  options: RedriveOptions,
): Promise<Returns | undefined> {
  const signal = context.io.interrupt;
  return options.watchSeconds > 0 && summary.moved > 0
    ? await watchReturns(context.aws.sqs, plan.from.url, {
        since: summary.startedAt,
        digests: digests.slice(0, summary.moved),
        timeoutMs: options.watchSeconds * 1000,
        fifo: plan.from.fifo,
        ...(signal ? { signal } : {}),
      })
    : undefined;
}

/** What moved, what was left and why, and what the watch saw: a run fails when anything failed or came back. */
function movedOutcome(
  outcome: Outcome,
  signal: AbortSignal | undefined,
  target: string,
  summary: MoveSummary,
  returns: Returns | undefined,
  watchSeconds: number,
): number {
  const moved = `${summary.moved} moved back to ${target} (${summary.mode}), ${summary.failed} refused or not taken (left in the DLQ), ${summary.arrivedAfterStart} arrived in the DLQ after the start (left for the next run)${summary.leftByChoice > 0 ? `, ${summary.leftByChoice} left by --max or --reason` : ""}`;
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
