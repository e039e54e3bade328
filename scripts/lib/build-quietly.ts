/**
 * The build a command needs before it runs the function bundles (npm start, npm run chaos,
 * bench:local-pipeline): `turbo run build` (cached) and the artifacts in dist/, with their output kept
 * and shown only when a step fails. Turbo's banner, package list and telemetry notice are not the
 * user's business on every run; a failing build is, in full. Writes nothing to stdout, so
 * `npm start --json` prints JSON only.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { collectArtifacts } from "./artifacts.ts";

/** How the build ended: built, or failed with the exit status to end with and what to show. */
export type BuildResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: number; readonly output: string };

/** The child the build is waiting on, so that a stop request can end it with the command. */
let running: ChildProcess | undefined;

function run(
  root: string,
  command: string,
  args: readonly string[],
): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: root,
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1", TURBO_NO_UPDATE_NOTIFIER: "1", FORCE_COLOR: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    running = child;
    let output = "";
    child.stdout.on("data", (c) => {
      output += c;
    });
    child.stderr.on("data", (c) => {
      output += c;
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      running = undefined;
      resolve({ code: code ?? (signal ? 128 : 1), output });
    });
  });
}

/** Ends the build's running step (turbo), if any: the command was asked to stop. */
export function stopBuild(signal: NodeJS.Signals): void {
  running?.kill(signal);
}

/** Builds every function bundle and collects them into `root`/dist, progress on stderr. */
export async function buildQuietly(root: string): Promise<BuildResult> {
  process.stderr.write("building the function bundles (turbo, cached)...\n");
  const turbo = join(root, "node_modules", ".bin", "turbo");
  const { code, output } = await run(root, turbo, ["run", "build", "--output-logs=errors-only"]);
  if (code !== 0) return { ok: false, code, output: `${output}\nturbo failed (exit ${code})` };
  // In this process: a process of its own for collect-artifacts.ts cost npm start about 0.4 s.
  process.stderr.write("collecting them into dist/...\n");
  try {
    await collectArtifacts(root);
  } catch (error) {
    return { ok: false, code: 1, output: `collecting the function zips into dist/ failed: ${String(error)}` };
  }
  return { ok: true };
}
