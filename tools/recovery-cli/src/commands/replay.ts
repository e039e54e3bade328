import { wholeNumber } from "@mcp-pipeline/cli";
import {
  type Check,
  checkReplayStream,
  failed,
  InterruptedError,
  notChecked,
  planReplay,
  type QuarantineFilter,
  type QuarantineScan,
  ReplayIncompleteError,
  type ReplayPlan,
  type ReplayStreamCheck,
  replayQuarantine,
} from "@mcp-pipeline/recovery";
import { bucketChecks, type Caller, environmentChecks } from "../caller.js";
import {
  type Context,
  callerCheck,
  confirm,
  listed,
  maxOf,
  plannedRun,
  quarantineFilter,
  RecoverExit,
  scanFiltered,
} from "../context.js";
import { interruptedStatus } from "../interrupt.js";
import { progressBar } from "../progress.js";
import { bucketOf, requireBucketSource, required } from "../targets.js";

/**
 * `replay`: puts quarantined records back into the stream they came from. First the plan (account, region,
 * bucket, stream, counts by reason) and every check the real run needs; then, with --yes or a person's yes,
 * the records. A dry run stops after the plan, with the status a real run would have before acting.
 */
export async function replay(context: Context): Promise<number> {
  const options = replayOptions(context);
  const { stream, max } = options;
  const { caller, check: identity } = await callerCheck(context);
  const bucket = bucketOf(context.targets, caller?.account);
  const scan = await scanFiltered(context, bucket, options.filter, caller?.account);
  const plan = planReplay(scan.entries, {
    includePermanent: options.includePermanent,
    ...(max !== undefined ? { max } : {}),
  });
  const target = await checkReplayStream(context.aws.kinesis, stream, plan.items);
  const checks = await replayChecks(context, stream, bucket, target, { caller, identity });
  const givenUpAgain = plan.items.filter((i) => i.givenUpAgain).length;
  const run = plannedRun(context, {
    lines: planLines({ stream, bucket, max }, target, caller, plan, scan, givenUpAgain),
    checks,
    wouldDo: `${plan.items.length} would be replayed into ${stream}`,
    data: {
      bucket,
      stream,
      streamArn: target.streamArn ?? null,
      caller: caller ?? null,
      matched: plan.matched,
      alreadyReplayed: plan.alreadyReplayed,
      toReplay: plan.items.length,
      byReason: plan.byReason,
      givenUpAgain,
      skippedPermanent: plan.skippedPermanent.length,
      leftByMax: plan.leftByMax,
      unreadable: scan.unreadable,
      journals: scan.journals,
    },
  });
  if (run.stopped !== undefined) return run.stopped;
  const { outcome } = run;
  if (plan.items.length === 0) return outcome(RecoverExit.Ok, "nothing to replay", { replayed: 0 });

  const answer = await confirm(
    context,
    `Put ${plan.items.length} record${plan.items.length === 1 ? "" : "s"} back into ${stream}?`,
  );
  if (answer !== "given")
    return outcome(RecoverExit.Refused, "nothing done", { refused: true, consent: answer });
  return putBack(context, outcome, bucket, scan, caller, options);
}

type Outcome = ReturnType<typeof plannedRun>["outcome"];

interface ReplayOptions {
  readonly stream: string;
  readonly filter: QuarantineFilter;
  readonly rate: number;
  readonly max: number | undefined;
  readonly includePermanent: boolean;
}

/** The bucket's source, the stream and the flags, read and refused before anything is asked of AWS. */
function replayOptions(context: Context): ReplayOptions {
  const { flags } = context;
  requireBucketSource(context.targets);
  const stream = required(context.targets.stream, "no stream: pass --stream or set STREAM_NAME");
  const filter = quarantineFilter(flags);
  const rate = wholeNumber("rate", flags.rate, { fallback: 100, min: 1, max: 10_000 });
  const max = maxOf(flags);
  const includePermanent = flags["include-permanent"] === true;
  return { stream, filter, rate, max, includePermanent };
}

/**
 * The caller, the stream's own checks (the records' stream, its region), --stream's ARN against the stream
 * reached by its name, what cannot be tried without writing, and where the caller is known the bucket's
 * and the stream's environment.
 */
async function replayChecks(
  context: Context,
  stream: string,
  bucket: string,
  target: ReplayStreamCheck,
  who: { readonly caller: Caller | undefined; readonly identity: Check },
): Promise<Check[]> {
  const { caller } = who;
  const given = context.targets.streamArn;
  const checks: Check[] = [
    who.identity,
    ...target.checks,
    ...(given !== undefined && target.streamArn !== undefined && target.streamArn !== given
      ? [
          failed(
            "stream",
            `--stream ${given} is not the stream the caller reaches by that name: that is ${target.streamArn}`,
          ),
        ]
      : []),
    notChecked(
      "write permissions",
      `kinesis:PutRecords on ${stream} and s3:GetObjectTagging, s3:PutObjectTagging on ${bucket} (the marks) cannot be tried without writing; a denial stops the run and says what it put back`,
    ),
  ];
  if (caller !== undefined) {
    checks.push(...(await bucketChecks(context.aws.s3, caller, bucket)));
    // kinesalite names every stream in us-east-1 whatever the region; the records' stream check above
    // holds the region to the records' own.
    if (target.streamArn)
      checks.push(...environmentChecks(caller, [{ what: "stream", arn: target.streamArn, region: false }]));
  }
  return checks;
}

/** The plan as a person reads it: where from and to, as whom, the counts, and what is left and why. */
function planLines(
  where: { readonly stream: string; readonly bucket: string; readonly max: number | undefined },
  target: ReplayStreamCheck,
  caller: Caller | undefined,
  plan: ReplayPlan,
  scan: QuarantineScan,
  givenUpAgain: number,
): string[] {
  const { stream, bucket, max } = where;
  const lines = [
    `replay into ${stream}${target.streamArn ? ` (${target.streamArn})` : ""} from s3://${bucket}`,
    `  as ${caller ? `account ${caller.account}, region ${caller.region}` : "an unknown caller"}`,
    `  ${plan.matched} records matched; ${plan.alreadyReplayed} already replayed; ${plan.items.length} to put back${plan.items.length > 0 ? `: ${listed(plan.byReason)}` : ""}`,
  ];
  if (givenUpAgain > 0)
    lines.push(
      `  ${givenUpAgain} of them failed again after an earlier replay: fix the cause first, or they come back again`,
    );
  if (plan.skippedPermanent.length > 0) {
    const reasons = new Map<string, number>();
    for (const i of plan.skippedPermanent) reasons.set(i.reason, (reasons.get(i.reason) ?? 0) + 1);
    lines.push(
      `  ${plan.skippedPermanent.length} left, their reason is permanent (${listed(reasons)}): the processor refuses the same bytes again; --include-permanent puts them back once it accepts them`,
    );
  }
  if (plan.leftByMax > 0)
    lines.push(`  ${plan.leftByMax} more wait beyond --max ${max}: the next run takes them`);
  if (scan.unreadable.length > 0)
    lines.push(`  ${scan.unreadable.length} objects could not be read and are skipped (inspect lists them)`);
  if (scan.journals.unreadable.length > 0)
    lines.push(
      `  ${scan.journals.unreadable.length} replay journals could not be read (${scan.journals.unreadable[0]?.key}: ${scan.journals.unreadable[0]?.error.message}): ignored, the objects they name were read in full`,
    );
  return lines;
}

/**
 * The records put back (replayQuarantine plans again from the same scan), with the progress on stderr:
 * redrawn on a terminal, once at the end otherwise. A run that stops part way says what it put back, what
 * remains and what it could not mark; interrupted, with the status of the signal.
 */
async function putBack(
  context: Context,
  outcome: Outcome,
  bucket: string,
  scan: QuarantineScan,
  caller: Caller | undefined,
  options: ReplayOptions,
): Promise<number> {
  const { stream, max } = options;
  const tty = context.io.terminal.interactive;
  try {
    const summary = await replayQuarantine(context.aws.s3, context.aws.kinesis, bucket, scan.entries, {
      streamName: stream,
      ratePerSecond: options.rate,
      includePermanent: options.includePermanent,
      ...(max !== undefined ? { max } : {}),
      ...(caller ? { expectedBucketOwner: caller.account } : {}),
      ...(context.io.interrupt ? { signal: context.io.interrupt } : {}),
      // A journal not stored loses nothing (the objects are marked): the next replay reads them in full.
      onJournal: (journal) => {
        if (!journal.written)
          context.io.err(
            `${tty ? "\n" : ""}replay journal ${journal.key} not stored (${journal.error.name}: ${journal.error.message}): the next replay reads its objects in full`,
          );
      },
      onProgress: (done, total) => {
        if (tty) context.io.err(`\r${progressBar(done, total)}`);
        else if (done === total) context.io.err(progressBar(done, total));
      },
    });
    return outcome(
      RecoverExit.Ok,
      `${summary.replayed} replayed into ${stream}, ${summary.alreadyReplayed} already replayed before (of ${summary.matched} matched)`,
      { replayed: summary.replayed, summary },
    );
  } catch (error) {
    if (!(error instanceof ReplayIncompleteError)) throw error;
    if (tty) context.io.err("");
    const status =
      error.interrupted && error.cause instanceof InterruptedError
        ? interruptedStatus(error.cause)
        : RecoverExit.Failed;
    return outcome(status, error.message, {
      interrupted: error.interrupted,
      replayed: error.replayed,
      remaining: error.remaining,
      unmarked: error.unmarked,
    });
  }
}
