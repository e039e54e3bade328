/** What every command of `npm run recover` is given, and what they do alike. */
import { ExitCode, shown, UsageError, wholeNumber } from "@mcp-pipeline/cli";
import {
  type Check,
  CheckStatus,
  failed,
  type QuarantineFilter,
  type QuarantineScan,
  scanQuarantine,
} from "@mcp-pipeline/recovery";
import { type AwsClients, unreachable } from "./aws-environment.js";
import { type Caller, CallerUnknownError, callerIdentity } from "./caller.js";
import { formatSeconds } from "./status.js";
import type { Targets } from "./targets.js";
import { type Consent, consent, type Terminal } from "./terminal.js";

/**
 * The exit statuses of `npm run recover`: @mcp-pipeline/cli's, and two of its own. Refused: a check before
 * acting failed (or nobody said yes), nothing was changed. Attention: `status` or `triage` found something
 * that needs a person.
 */
export const RecoverExit = { ...ExitCode, Refused: 3, Attention: 4 } as const;
export type RecoverExit = (typeof RecoverExit)[keyof typeof RecoverExit];

/** The flags, as parsed (cli.ts). */
export interface Flags {
  readonly reason?: string;
  readonly since?: string;
  readonly until?: string;
  readonly session?: string;
  readonly shard?: string;
  readonly bucket?: string;
  readonly stream?: string;
  readonly table?: string;
  readonly prefix?: string;
  readonly from?: string;
  readonly to?: string;
  readonly queue?: string;
  readonly mode?: string;
  readonly "dry-run"?: boolean;
  readonly yes?: boolean;
  readonly list?: boolean;
  readonly "include-permanent"?: boolean;
  readonly "full-scan"?: boolean;
  readonly max?: string;
  readonly rate?: string;
  readonly watch?: string;
  readonly "stuck-after"?: string;
  readonly "max-iterator-age"?: string;
  readonly json?: boolean;
}

export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly terminal: Terminal;
  readonly now: () => number;
  /** Aborted when a person asks the command to stop (Ctrl-C): long operations stop at their next step. */
  readonly interrupt?: AbortSignal;
}

export interface Context {
  readonly flags: Flags;
  /** Positional arguments after the command. */
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly aws: AwsClients;
  readonly targets: Targets;
  readonly io: Io;
}

/** Prints the text, or with --json the data, as the command's one result on stdout. */
export function print(context: Context, text: string, data: unknown): void {
  context.io.out(context.flags.json ? JSON.stringify(data) : text);
}

/** An ISO 8601 instant with its zone: a date, a time to the minute at least, and `Z` or an offset. */
const INSTANT = /^(\d{4})-(\d\d)-(\d\d)T\d\d:\d\d(?::\d\d(?:\.\d{1,9})?)?(Z|[+-]\d\d:\d\d)?$/;

/**
 * `--since`/`--until`: an instant, in UTC or with an offset. Without a zone Date.parse reads the time in
 * the machine's zone, so the same command would select other records on a laptop in another zone; and it
 * rolls an impossible date over (February 30 is March 2): both are refused, with what to type.
 */
function instant(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const example = "e.g. 2026-11-30T10:00:00Z, or 2026-11-30T11:00:00+01:00";
  const match = INSTANT.exec(value);
  const ms = Date.parse(value);
  if (match === null || Number.isNaN(ms))
    throw new UsageError(`--${name} must be an ISO instant (${example}), got "${shown(value)}"`);
  if (match[4] === undefined)
    throw new UsageError(
      `--${name} "${shown(value)}" has no zone, and would be read in this machine's: add Z for UTC or an offset (${example})`,
    );
  const [year, month, day] = [match[1], match[2], match[3]].map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day)
    throw new UsageError(`--${name} "${shown(value)}" is not a date of the calendar (${example})`);
  return ms;
}

/** The quarantine filter of --reason, --since, --until, --session and --shard; a reversed range is refused. */
export function quarantineFilter(flags: Flags): QuarantineFilter {
  const since = instant("since", flags.since);
  const until = instant("until", flags.until);
  if (since !== undefined && until !== undefined && since >= until)
    throw new UsageError(
      `--since (${flags.since}) is not before --until (${flags.until}): the range holds nothing; swap them`,
    );
  return {
    ...(flags.reason !== undefined ? { reason: flags.reason } : {}),
    ...(flags.session !== undefined ? { session: flags.session } : {}),
    ...(flags.shard !== undefined ? { shardId: flags.shard } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(until !== undefined ? { until } : {}),
  };
}

/** `--max N`, a whole number from 1. */
export const maxOf = (flags: Flags): number | undefined =>
  flags.max === undefined
    ? undefined
    : wholeNumber("max", flags.max, { fallback: 1, min: 1, max: 10_000_000 });

/** Counts by key, as "a (3), b (1)". */
export const listed = (counts: ReadonlyMap<string, number> | Readonly<Record<string, number>>): string =>
  [...(counts instanceof Map ? counts : Object.entries(counts))]
    .sort(([a], [b]) => String(a).localeCompare(String(b)))
    .map(([k, n]) => `${k} (${n})`)
    .join(", ");

/**
 * The quarantine's records under the filter. A --reason that no record has (under the other filters) is a
 * bad command line: the message lists the reasons there are.
 */
export async function scanFiltered(
  context: Context,
  bucket: string,
  filter: QuarantineFilter,
  expectedBucketOwner: string | undefined,
): Promise<QuarantineScan> {
  const { reason, ...others } = filter;
  const scan = await scanQuarantine(context.aws.s3, bucket, others, {
    ...(expectedBucketOwner ? { expectedBucketOwner } : {}),
    ...(context.io.interrupt ? { signal: context.io.interrupt } : {}),
    fullScan: context.flags["full-scan"] === true,
  });
  if (reason === undefined) return scan;
  const present = new Map<string, number>();
  for (const e of scan.entries)
    present.set(e.record.reason.code, (present.get(e.record.reason.code) ?? 0) + 1);
  if (!present.has(reason))
    throw new UsageError(
      `--reason ${shown(reason)} matches no quarantined record${Object.keys(others).length > 0 ? " under the other filters" : ""}; ${present.size === 0 ? "none is there" : `the reasons there are: ${listed(present)}`}`,
    );
  return { ...scan, entries: scan.entries.filter((e) => e.record.reason.code === reason) };
}

/** The caller as a check: who acts, or why that is unknown (then nothing may change state). */
export async function callerCheck(context: Context): Promise<{ caller?: Caller; check: Check }> {
  try {
    const caller = await callerIdentity(context.aws.sts, unreachable(context.env, "STS"));
    return {
      caller,
      check: {
        name: "caller",
        status: CheckStatus.Passed,
        detail: `${caller.arn} (account ${caller.account}, region ${caller.region})`,
      },
    };
  } catch (error) {
    if (error instanceof CallerUnknownError) return { check: failed("caller", error.message) };
    throw error;
  }
}

const MARK: Record<Check["status"], string> = {
  passed: "ok",
  failed: "REFUSED",
  "not-checked": "not checked",
};

/** Checks as lines under a heading, failed ones first. */
export function checksText(checks: readonly Check[]): string {
  const order = (c: Check) => (c.status === "failed" ? 0 : c.status === "not-checked" ? 1 : 2);
  return [
    "checks:",
    ...[...checks]
      .sort((a, b) => order(a) - order(b))
      .map((c) => `  ${MARK[c.status].padEnd(11)} ${c.name}: ${c.detail}`),
  ].join("\n");
}

/**
 * The guard of every command that changes state, after the plan is printed: --yes, or a person at a
 * terminal; otherwise nothing is done and the exit status says refused.
 */
export async function confirm(context: Context, question: string): Promise<Consent> {
  const answer = await consent(context.io.terminal, context.flags.yes === true, question);
  if (answer === "no-terminal")
    context.io.err("nothing done: pass --yes to act (no terminal to ask on), or --dry-run to look only");
  if (answer === "declined") context.io.err("nothing done: not confirmed");
  return answer;
}

/** An age from an instant (ms) to now, for people. */
export const ageOf = (context: Context, at: number): string => formatSeconds((context.io.now() - at) / 1000);

/** A command that changes state, once its plan is printed: how it ends, or how it goes on. */
export interface PlannedRun {
  /** Prints the result (with --json, the plan and the result as one object) and returns `status`. */
  readonly outcome: (status: number, result: string, data: Readonly<Record<string, unknown>>) => number;
  /** The exit status when the run ends after the plan (a dry run, or a failed check); undefined to go on. */
  readonly stopped?: number;
}

/**
 * The plan of replay and redrive: printed first (before any question), then a dry run ends with the status
 * a real run would have before acting, and a real run that fails a check is refused, nothing done.
 */
export function plannedRun(
  context: Context,
  plan: {
    readonly lines: readonly string[];
    readonly data: Readonly<Record<string, unknown>>;
    readonly checks: readonly Check[];
    /** What a dry run that passes its checks would do, e.g. "3 would be replayed into s". */
    readonly wouldDo: string;
  },
): PlannedRun {
  if (!context.flags.json) context.io.out([...plan.lines, checksText(plan.checks)].join("\n"));
  const outcome = (status: number, result: string, data: Readonly<Record<string, unknown>>) => {
    print(context, result, { ...plan.data, checks: plan.checks, ...data });
    return status;
  };
  const refused = plan.checks.filter((c) => c.status === CheckStatus.Failed);
  if (context.flags["dry-run"])
    return {
      outcome,
      stopped:
        refused.length > 0
          ? outcome(
              RecoverExit.Refused,
              `dry run: a real run would be refused (${refused.map((c) => c.name).join(", ")})`,
              { dryRun: true, refused: true },
            )
          : outcome(RecoverExit.Ok, `dry run: ${plan.wouldDo}`, { dryRun: true, refused: false }),
    };
  if (refused.length > 0)
    return {
      outcome,
      stopped: outcome(
        RecoverExit.Refused,
        `refused, nothing done: ${refused.map((c) => `${c.name}: ${c.detail}`).join("; ")}`,
        { refused: true },
      ),
    };
  return { outcome };
}
