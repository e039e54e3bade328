/**
 * npm start's build step: `turbo run build` (cached) and the artifacts in dist/, with their output kept
 * and shown only when a step fails. Turbo's banner, package list and telemetry notice are not the
 * user's business on every run; a failing build is, in full. Writes nothing to stdout, so
 * `npm start --json` prints JSON only.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { collectArtifacts } from "./lib/artifacts.ts";

const root = join(import.meta.dirname, "..");

function run(command: string, args: readonly string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: root,
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1", TURBO_NO_UPDATE_NOTIFIER: "1", FORCE_COLOR: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c) => {
      output += c;
    });
    child.stderr.on("data", (c) => {
      output += c;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
  });
}

const bin = (name: string) => join(root, "node_modules", ".bin", name);
process.stderr.write("building the function bundles (turbo, cached)...\n");
const { code, output } = await run(bin("turbo"), ["run", "build", "--output-logs=errors-only"]);
if (code !== 0) {
  process.stderr.write(`${output}\nturbo failed (exit ${code})\n`);
  process.exit(code);
}
// In this process: a tsx process of its own for collect-artifacts.ts cost npm start about 0.4 s.
process.stderr.write("collecting them into dist/...\n");
try {
  await collectArtifacts(root);
} catch (error) {
  process.stderr.write(`collecting the function zips into dist/ failed: ${String(error)}\n`);
  process.exit(1);
}
