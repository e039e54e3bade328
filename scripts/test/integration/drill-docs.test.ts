/**
 * docs/operations.md's "Drill" section, run as written (issue 26, item 10): its lines start a drill's stack
 * with `npm start` (the real command: its build included), load the served file and run `npm run drill:check`,
 * which must say NOT DONE; after the recovery the section describes (the given-up records replayed, the job
 * DLQs redriven once the downstream is back, here with the recovery package that `npm run recover` runs:
 * drill-recovery.ts), the
 * same documented command must say DONE.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recoverDrill } from "../../../local/runtime/test/drill-recovery.ts";

const root = join(import.meta.dirname, "../../..");

/** The commands of the "## Drill" section's ```sh block, one per line. */
function drillCommands(): string[] {
  const markdown = readFileSync(join(root, "docs/operations.md"), "utf8");
  const section = markdown.slice(markdown.indexOf("\n## Drill\n"));
  const block = /^```sh\n([\s\S]*?)^```/m.exec(section)?.[1] ?? "";
  return block
    .split("\n")
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter(Boolean);
}

let work: string;
let shell: ChildProcess | undefined;
let stderr = "";
let env: Record<string, string> = {};
/** The documented commands, their /tmp files in the test's own folder. */
const privately = (command: string) => command.replaceAll("/tmp/", `${work}/`);
const commands = drillCommands();
const starting = commands.slice(0, 3);
const [check] = commands.slice(3);

/** A documented command in bash, with the served file loaded as the section loads it. */
function run(command: string) {
  const result = spawnSync(
    "bash",
    ["-c", `set -euo pipefail\n${privately(starting[2] as string)}\n${privately(command)}`],
    { cwd: root, encoding: "utf8", timeout: 300_000 },
  );
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "drill-docs-"));
  shell = spawn(
    "bash",
    ["-c", `set -euo pipefail\n${starting.slice(0, 2).map(privately).join("\n")}\necho started\nwait`],
    {
      cwd: root,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, AWS_ENDPOINT_URL: "", AWS_ENDPOINT_URL_KINESIS: "", AWS_ENDPOINT_URL_SQS: "" },
    },
  );
  shell.stderr?.on("data", (c) => {
    stderr += c;
  });
  await new Promise<void>((resolve, reject) => {
    shell?.stdout?.on("data", (c) => {
      if (String(c).includes("started")) resolve();
    });
    shell?.on("exit", (code) => reject(new Error(`the drill's lines exited with ${code}:\n${stderr}`)));
  });
  env = Object.fromEntries(
    (await readFile(join(work, "drill.env"), "utf8"))
      .split("\n")
      .map((l) => /^([A-Z0-9_]+)=(.*)$/.exec(l))
      .filter((m) => m !== null)
      .map((m) => [m[1] as string, m[2] as string]),
  );
}, 1_200_000);

afterAll(async () => {
  if (shell?.pid !== undefined && shell.exitCode === null) {
    const exited = new Promise((r) => shell?.on("exit", r));
    process.kill(-shell.pid, "SIGINT");
    await exited;
  }
  if (work) await rm(work, { recursive: true, force: true });
});

describe("docs/operations.md, Drill", () => {
  it("shows the start lines, the file to load and the check", () => {
    expect(starting[0]).toBe(
      "rm -f /tmp/drill.env; npm start --silent -- --serve --drill > /tmp/drill.env &",
    );
    expect(starting[1]).toBe(
      "until grep -qsx '# ready' /tmp/drill.env; do kill -0 $! || break; sleep 1; done",
    );
    expect(starting[2]).toBe("set -a; . /tmp/drill.env; set +a");
    expect(check).toBe("npm run drill:check");
    expect(commands).toHaveLength(4);
  });

  it("npm run drill:check says NOT DONE on the fresh drill, then DONE once recovered", async () => {
    const first = run(check as string);
    expect(first.code, first.stderr).toBe(1);
    expect(first.stdout).toMatch(/^NOT DONE: \d+ input\(s\) still to recover$/m);

    const deadline = Date.now() + 600_000;
    while (!stderr.includes("the downstream is back up")) {
      if (Date.now() > deadline) throw new Error(`the drill's downstream never came back up:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    await recoverDrill(env);
    for (;;) {
      const again = run(check as string);
      if (again.code === 0) {
        expect(again.stdout).toMatch(/^DONE: nothing was lost/m);
        break;
      }
      expect(again.code, again.stderr).toBe(1);
      if (Date.now() > deadline) throw new Error(`the drill never got done:\n${again.stdout}`);
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }, 1_200_000);
});
