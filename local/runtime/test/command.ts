/**
 * npm start as an operator runs it, for the tests that drive it in a child process: through npm (the
 * documented lines) or through its entry (`--dist` given, no build), with the served file read as a
 * shell would load it, and the checks that the stack is gone.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";

export const root = join(import.meta.dirname, "../../..");

/** A bound for a broken run, not a speed assertion: every wait below is for an event. */
export const GIVE_UP_MS = 240_000;

export interface Command {
  readonly child: ChildProcess;
  /** The NAME=value lines printed on stdout so far (`--serve`). */
  readonly env: Record<string, string>;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout printed `# ready` (rejects if the command ends first). */
  readonly ready: Promise<Record<string, string>>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The environment of a child that must start its own emulators, with its temporary folder at `tmp`. */
export function childEnvironment(tmp: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TMPDIR: tmp,
    AWS_ENDPOINT_URL: "",
    AWS_ENDPOINT_URL_KINESIS: "",
    AWS_ENDPOINT_URL_SQS: "",
    AWS_ENDPOINT_URL_S3: "",
    AWS_ENDPOINT_URL_DYNAMODB: "",
    ...extra,
  };
}

/** Watches a command already started: its stdout (the served lines), stderr and exit. */
export function watchChild(child: ChildProcess): Command {
  let out = "";
  let err = "";
  const env: Record<string, string> = {};
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  child.stderr?.on("data", (c) => {
    err += c;
  });
  const ready = new Promise<Record<string, string>>((resolve, reject) => {
    void exited.then(({ code }) => reject(new Error(`the command exited (${code}) before # ready:\n${err}`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      out += `${line}\n`;
      const match = /^([A-Z0-9_]+)=(.*)$/.exec(line);
      if (match) env[match[1] as string] = match[2] as string;
      if (line === "# ready") resolve(env);
    });
  });
  ready.catch(() => {});
  return { child, env, stdout: () => out, stderr: () => err, ready, exited };
}

/** `npm start --silent -- <args>`, as the documented background line starts it. */
export function npmStart(args: readonly string[], env: NodeJS.ProcessEnv): Command {
  return watchChild(
    spawn("npm", ["start", "--silent", "--", ...args], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] }),
  );
}

/** npm start's entry without npm and without the build (`--dist` must name the zips). */
export function startEntry(args: readonly string[], env: NodeJS.ProcessEnv): Command {
  return watchChild(
    spawn(
      process.execPath,
      [
        "--disable-warning=ExperimentalWarning",
        "--import",
        "tsx",
        join(root, "local/runtime/bin/start.ts"),
        ...args,
      ],
      { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] },
    ),
  );
}

/** Resolves with what `probe` returns once it is defined; throws after GIVE_UP_MS naming `what`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
  const deadline = Date.now() + GIVE_UP_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Whether a process with this id exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The processes whose parent is `pid`: id and command line. */
export function childrenOf(pid: number): { pid: number; command: string }[] {
  const ps = spawnSync("ps", ["-o", "pid=,args=", "--ppid", String(pid)], { encoding: "utf8" });
  return ps.stdout
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(.*)$/.exec(line))
    .filter((m) => m !== null)
    .map((m) => ({ pid: Number(m[1]), command: m[2] as string }));
}

/** Whether anything answers at `endpoint` (a served emulator): a refused connection is false. */
export async function answers(endpoint: string): Promise<boolean> {
  try {
    await fetch(endpoint, { method: "POST", signal: AbortSignal.timeout(10_000) });
    return true;
  } catch {
    return false;
  }
}

/** The stacks' temporary folders left in `tmp` (npm start's are mcp-local-*). */
export async function leftovers(tmp: string): Promise<string[]> {
  return (await readdir(tmp)).filter((d) => d.startsWith("mcp-local-"));
}
