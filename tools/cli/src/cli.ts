/**
 * What every command-line entry here (npm start, lint:config, recover) does the same way: strict parsing
 * with Node's util.parseArgs, one error type for a bad command line, the documented exit statuses, the
 * checks of number options, and the guard that runs `main` only when the file is the process's entry.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";

/** The exit statuses the CLIs document; a CLI may add its own above these (npm start: 3, timed out). */
export const ExitCode = {
  Ok: 0,
  /** Findings, loss, or an operation that failed. */
  Failed: 1,
  /** A bad command line (or, for lint:config, a settings file it cannot read). */
  Usage: 2,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A bad command line: the message says which option and why. */
export class UsageError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "UsageError";
  }
}

/**
 * util.parseArgs, strict, with its errors (unknown option, missing value, stray positional) as UsageError.
 * A negative number after an option that takes a value is its value (`--events -3` as `--events=-3`):
 * parseArgs would refuse it as ambiguous and hide the range message a person needs. Only negative numbers
 * are attached, so a missing value followed by another option (`--events --json`) is still refused.
 */
export function parseCommandLine<const T extends Omit<ParseArgsConfig, "args" | "strict">>(
  argv: readonly string[],
  config: T,
): ReturnType<typeof parseArgs<T & { args: string[]; strict: true }>> {
  const valued = new Set(
    Object.entries(config.options ?? {})
      .filter(([, option]) => option.type === "string")
      .map(([name]) => `--${name}`),
  );
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const next = argv[i + 1];
    if (valued.has(arg) && next !== undefined && /^-\d/.test(next)) {
      args.push(`${arg}=${next}`);
      i++;
    } else args.push(arg);
  }
  try {
    return parseArgs({ ...config, args, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message, { cause: error });
  }
}

/** How long a value a message echoes may be: a 1 MiB argument is named by its start, not printed whole. */
const SHOWN_CHARACTERS = 64;

/** An option's value as an error message shows it: at most SHOWN_CHARACTERS, then how long it was. */
export function shown(value: string): string {
  return value.length <= SHOWN_CHARACTERS
    ? value
    : `${value.slice(0, SHOWN_CHARACTERS)}... (${value.length} characters)`;
}

/**
 * An option's whole number, `fallback` when absent; a UsageError names the option, the range and the input
 * as it was typed (2^64 would print rounded as a number). "-0" is 0.
 */
export function wholeNumber(
  name: string,
  value: string | undefined,
  range: { readonly fallback: number; readonly min: number; readonly max: number },
): number {
  if (value === undefined) return range.fallback;
  if (!/^-?\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number, got "${shown(value)}"`);
  const n = Number(value);
  if (n < range.min || n > range.max) {
    throw new UsageError(`--${name} must be between ${range.min} and ${range.max}, got ${shown(value)}`);
  }
  return n === 0 ? 0 : n;
}

/** An option's number from 0 to 1 (a rate), `fallback` when absent. "-0" is 0. */
export function fraction(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0 || n > 1) {
    throw new UsageError(`--${name} must be a number from 0 to 1, got "${shown(value)}"`);
  }
  return n === 0 ? 0 : n;
}

/**
 * Says what is wrong with the command line, then the usage, on stderr; returns the exit status for it.
 * Anything but a UsageError is not the command line's fault and is thrown on.
 */
export function refuseCommandLine(error: unknown, usage: string): typeof ExitCode.Usage {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`${error.message}\n\n${usage}\n`);
  return ExitCode.Usage;
}

/**
 * Says what is wrong with the command line in one line on stderr, ending with the command that lists the
 * options; returns the exit status for it. For commands that build or start things first: the usage would
 * push the error off the screen, and the error must be the last thing there. Anything but a UsageError is
 * thrown on.
 */
export function refuseInOneLine(error: unknown, helpCommand: string): typeof ExitCode.Usage {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`${error.message} (\`${helpCommand}\` lists the options)\n`);
  return ExitCode.Usage;
}

/**
 * Runs `main` with the command line when `moduleUrl` (the caller's import.meta.url) is the file Node was
 * started with, and exits with its status; a crash prints its stack and exits with `crashExitCode`.
 * Imported (by a test), the file runs nothing.
 */
export function runIfMain(
  moduleUrl: string,
  main: (argv: readonly string[]) => Promise<number>,
  crashExitCode: number,
): void {
  if (moduleUrl !== `file://${process.argv[1]}`) return;
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(crashExitCode);
    },
  );
}
