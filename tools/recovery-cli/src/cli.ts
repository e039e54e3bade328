/**
 * `npm run recover -- <command>`: triage and status, inspect the quarantine and replay it into the stream,
 * look into and redrive SQS DLQs. Reaches AWS (or LocalStack, or `npm start -- --serve`) through the
 * standard variables of the environment it is given: AWS_REGION, credentials, AWS_ENDPOINT_URL_*.
 */
import { parseCommandLine, UsageError } from "@mcp-pipeline/cli";
import {
  InterruptedError,
  InvalidQueueReferenceError,
  QueueNotFoundError,
  RecoveryRefusedError,
} from "@mcp-pipeline/recovery";
import { awsClients, nobodyAnswered } from "./aws-environment.js";
import { inspect } from "./commands/inspect.js";
import { peek } from "./commands/peek.js";
import { redrive } from "./commands/redrive.js";
import { replay } from "./commands/replay.js";
import { show } from "./commands/show.js";
import { status } from "./commands/status.js";
import { triage } from "./commands/triage.js";
import { type Context, type Flags, type Io, RecoverExit } from "./context.js";
import { interruptedStatus, processInterrupt } from "./interrupt.js";
import { targetsOf } from "./targets.js";
import { processTerminal } from "./terminal.js";

export const USAGE = `npm run recover -- <command> [options]

Commands
  triage                  the quarantine and every DLQ in one view, grouped by reason, each group
                          permanent or retryable, with the command to run next
  status                  per queue: depth, in flight, oldest message; stuck FIFO groups (from the
                          tool-calls table); the processor's iterator age; alarms in ALARM
  inspect                 counts of quarantined records by reason, shard and day; --list: one line per
                          object (key, reason, age, replayed or not)
  show KEY                one quarantined record, its data decoded
  replay                  put quarantined records back into the stream they came from (original keys and
                          bytes, order kept per key), marking each; a record that fails again after a
                          replay waits again. Permanent reasons (bad-json...) only with --include-permanent
  peek                    the messages of a DLQ (--queue or --from), read without taking them
  redrive                 move a DLQ's messages back to its source queue (the queue whose redrive policy
                          names it), then watch the DLQ for what comes straight back

replay and redrive show the plan (account, region, source, target, counts by reason) and the checks, then
act with --yes or after a yes typed at a terminal; --dry-run stops after the plan and checks.

Filters (inspect, replay)
  --reason CODE           e.g. RetryAttemptsExhausted, RecordAgeExceeded, bad-json, schema-violation
                          (peek, redrive: a DLQ reason, or max-receives for those SQS moved)
  --since ISO, --until ISO   arrival time range, e.g. 2026-11-30T10:00:00Z
  --session ID            one session (partition key)
  --shard ID              one shard

Where (default: the variables \`npm start -- --serve\` prints, or names from the prefix)
  --bucket NAME           quarantine bucket (default $QUARANTINE_BUCKET)
  --stream NAME           stream to replay into, by name or ARN (default $STREAM_NAME)
  --table NAME            tool-calls table, for status (default $TOOL_CALLS_TABLE)
  --prefix NAME           the environment's name prefix (default $NAME_PREFIX, or $STREAM_NAME without -events)
  --queue NAME            tool-jobs, session-jobs or stream-failures: its DLQ and source queue
                          (TOOL_JOBS_DLQ_URL and TOOL_JOBS_QUEUE_URL..., or their names from the prefix)
  --from DLQ, --to QUEUE  redrive, peek: a queue URL or ARN; --to defaults to the DLQ's source

Options
  --yes                   act without asking (replay, redrive)
  --dry-run               show the plan and run every check, change nothing
  --max N                 replay: at most N records; redrive: at most N messages; peek, inspect --list: lines
  --include-permanent     replay: records with a permanent reason too
  --full-scan             inspect, replay: read every object again, not trusting the replay journals
                          (after a mark was changed by hand)
  --list                  inspect: one line per object
  --mode auto|move-task|mover   redrive: how to move (default auto; --max and --reason need the mover)
  --rate N                records (replay) or messages (redrive) per second, at most (default 100;
                          a message move task: 500 at most)
  --watch SECONDS         redrive: how long to watch the DLQ for moved messages coming back (default 20, 0: no)
  --stuck-after SECONDS   status: a FIFO group is stuck when its oldest unfinished call waits longer
                          (default: the FIFO queue's visibility timeout)
  --max-iterator-age SECONDS   status: the processor's lag that needs a person (default 60)
  --json                  print the result as JSON
  -h, --help

Exit status: 0 done (status, triage: nothing needs a person), 1 failed (or moved messages came straight
back), 2 bad command line, 3 refused (a check failed or nobody said yes: nothing changed), 4 status or
triage found something that needs a person, 130 (143, 129) stopped by Ctrl-C (SIGTERM, SIGHUP) at its
next step: what it did is said, nothing it read stays hidden, the same command again goes on.`;

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
      table: { type: "string" },
      prefix: { type: "string" },
      from: { type: "string" },
      to: { type: "string" },
      queue: { type: "string" },
      mode: { type: "string" },
      "dry-run": { type: "boolean" },
      yes: { type: "boolean" },
      list: { type: "boolean" },
      "include-permanent": { type: "boolean" },
      "full-scan": { type: "boolean" },
      max: { type: "string" },
      rate: { type: "string" },
      watch: { type: "string" },
      "stuck-after": { type: "string" },
      "max-iterator-age": { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}

const COMMANDS: Readonly<Record<string, (context: Context) => Promise<number>>> = {
  triage,
  status,
  inspect,
  show,
  replay,
  peek,
  redrive,
};

/** Options that only some commands take; given to another, they are named as a mistake, not ignored. */
const ONLY: Readonly<Record<string, readonly string[]>> = {
  reason: ["inspect", "replay", "peek", "redrive"],
  since: ["inspect", "replay"],
  until: ["inspect", "replay"],
  session: ["inspect", "replay"],
  shard: ["inspect", "replay"],
  bucket: ["triage", "inspect", "show", "replay"],
  table: ["status"],
  queue: ["peek", "redrive"],
  from: ["peek", "redrive"],
  to: ["redrive"],
  mode: ["redrive"],
  watch: ["redrive"],
  "dry-run": ["replay", "redrive"],
  yes: ["replay", "redrive"],
  list: ["inspect"],
  "include-permanent": ["replay"],
  "full-scan": ["inspect", "replay"],
  max: ["inspect", "replay", "peek", "redrive"],
  rate: ["replay", "redrive"],
  "stuck-after": ["status"],
  "max-iterator-age": ["status"],
};

export function processIo(): Io {
  const err = (text: string) => process.stderr.write(text.startsWith("\r") ? text : `${text}\n`);
  return {
    out: (text) => process.stdout.write(`${text}\n`),
    err,
    terminal: processTerminal(),
    now: Date.now,
    interrupt: processInterrupt((text) => err(`\n${text}`)),
  };
}

/** Runs one command; returns its exit status (RecoverExit). `env` is the whole environment it acts in. */
/** A command line as read: `help`, or a command with its arguments and flags. */
export type CommandLine =
  | { readonly help: true }
  | {
      readonly help: false;
      readonly command: string;
      readonly args: readonly string[];
      readonly flags: Flags;
    };

/**
 * Reads a command line without running it: the options, the command, options given to a command that
 * does not take them, stray arguments. A UsageError says what is wrong (the alarms' commands are held to
 * it by a test).
 */
export function readCommandLine(argv: readonly string[]): CommandLine {
  const { values, positionals } = parse(argv);
  if (values.help) return { help: true };
  const [command, ...args] = positionals;
  if (command === undefined)
    throw new UsageError("no command: triage, status, inspect, show, replay, peek or redrive");
  if (COMMANDS[command] === undefined) throw new UsageError(`unknown command "${command}"`);
  for (const [flag, commands] of Object.entries(ONLY))
    if (values[flag as keyof typeof values] !== undefined && !commands.includes(command))
      throw new UsageError(`--${flag} is for ${commands.join(", ")}, not ${command}`);
  if (args.length > (command === "show" ? 1 : 0))
    throw new UsageError(`unexpected argument "${args.at(-1)}"`);
  const { help: _, ...flags } = values;
  return { help: false, command, args, flags };
}

export async function main(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  io: Io = processIo(),
): Promise<number> {
  let context: Context | undefined;
  try {
    const line = readCommandLine(argv);
    if (line.help) {
      io.out(USAGE);
      return RecoverExit.Ok;
    }
    const { command, args, flags } = line;
    context = { flags, args, env, aws: awsClients(env), targets: targetsOf(flags, env), io };
    return await (COMMANDS[command] as (context: Context) => Promise<number>)(context);
  } catch (error) {
    if (error instanceof UsageError || error instanceof InvalidQueueReferenceError) {
      // A bad command line: the reason, then the usage (exit status 2).
      io.err(`${error.message}\n\n${USAGE}`);
      return RecoverExit.Usage;
    }
    if (error instanceof InterruptedError) {
      // Stopped while reading (triage, status, peek, a plan): nothing was changed, nothing is held.
      io.err(`${error.message}: nothing changed; every message read is visible again`);
      return interruptedStatus(error);
    }
    if (error instanceof QueueNotFoundError || error instanceof RecoveryRefusedError) {
      io.err(`refused, nothing done: ${error.message}`);
      return RecoverExit.Refused;
    }
    io.err(nobodyAnswered(env, error) ?? `${(error as Error).name}: ${(error as Error).message}`);
    return RecoverExit.Failed;
  } finally {
    context?.aws.destroy();
  }
}
