/**
 * `npm run bench`: regenerates docs/benchmarks/, one part after another, each a child process, so a part
 * that fails is reported and the others still run (and heavy parts never overlap on a shared machine).
 * Then writes docs/benchmarks/README.md, the index of the pages. Options: --only <part>[,<part>],
 * --quick. Exits 1 when a part failed, 2 on a bad argument.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ChaosResult } from "@mcp-pipeline/chaos";
import { formatTable } from "@mcp-pipeline/chaos/report";
import { parseBenchArgs, selectParts } from "./lib/args.ts";
import { type PagePart, type PartStatus, previousDates, renderIndex } from "./lib/index-page.ts";
import { describeMachine, type Machine, machineNow } from "./lib/machine.ts";

const root = join(import.meta.dirname, "../../..");
const docs = join(root, "docs/benchmarks");
const tsx = join(root, "node_modules/.bin/tsx");

interface Part extends PagePart {
  /** The entry point, relative to the repository root; a part whose entry is missing is skipped. */
  readonly script: string;
  readonly args: readonly string[];
  readonly quickArgs: readonly string[];
  /** Runs the function bundles from dist/: the build (npm start's build step) runs first. */
  readonly needsBuild: boolean;
  /**
   * The script prints its figures as JSON on stdout instead of writing its page: the page is written
   * here, with the command and the machine; `summary` renders them for people above the JSON.
   */
  readonly capturesJson: boolean;
  readonly summary?: (json: unknown) => string;
}

/** The chaos run's own pass/fail table (what `npm run chaos` prints without --json). */
const chaosTable = (json: unknown): string => formatTable(json as ChaosResult);

/** Every part, in the order they run: the light ones first, so a quick look needs no build. */
const PARTS: readonly Part[] = [
  {
    name: "batch",
    page: "batch-engine.md",
    what: "the engine against the ideal bound; scheduling rules under a deadline (virtual time)",
    command: "npm run bench:batch",
    script: "tools/bench/src/batch-engine.ts",
    args: [],
    quickArgs: [], // a minute at most: no smaller form
    needsBuild: false,
    capturesJson: false,
  },
  {
    name: "peers",
    page: "batch-peers.md",
    what: "the engine against the seed loop and Powertools' BatchProcessor: wall time, bound, order; the slow-downstream incident",
    command: "npm run bench:peers",
    script: "tools/bench/src/batch-peers.ts",
    args: [],
    quickArgs: ["--quick"],
    needsBuild: false,
    capturesJson: false,
  },
  {
    name: "cold-start",
    page: "cold-start.md",
    what: "bundle size and import time per function, against a Powertools-based processor",
    command: "npm run bench:cold-start",
    script: "tools/bench/src/cold-start.ts",
    args: [],
    quickArgs: ["--runs=3"],
    needsBuild: false, // it builds its own bundles (tools/bundler)
    capturesJson: false,
  },
  {
    name: "processor",
    page: "processor-requests.md",
    what: "DynamoDB requests per event, new and redelivered: the processor, the per-event path, Powertools idempotency",
    command: "npm run bench:processor",
    script: "tools/bench/src/processor-requests.ts",
    args: [],
    quickArgs: [], // its live runs are the default scenario: no smaller form
    needsBuild: true,
    capturesJson: false,
  },
  {
    name: "local-pipeline",
    page: "local-pipeline.md",
    what: "the local pipeline's throughput end to end",
    command: "npm run bench:local-pipeline",
    script: "tools/bench/src/local-pipeline.ts",
    args: [],
    quickArgs: ["--events", "1000", "--runs", "1", "--no-write"],
    needsBuild: true,
    capturesJson: false,
  },
  {
    name: "ceiling",
    page: "ceiling.md",
    what: "each emulator alone, the mappings against a no-op function, the pipeline: the ceiling and the ratio reached",
    command: "npm run bench:ceiling",
    script: "tools/bench/src/ceiling.ts",
    args: [],
    quickArgs: ["--seconds", "1", "--records", "2000", "--events", "500", "--no-write"],
    needsBuild: true,
    capturesJson: false,
  },
  {
    name: "chaos",
    page: "chaos.md",
    what: "the chaos run: faults, a reshard, an emulator restart; the witnesses' verdict",
    command: "npm run chaos -- --json",
    script: "local/chaos/bin/chaos.ts",
    args: ["--json"],
    quickArgs: ["--json", "--events", "500"],
    needsBuild: true,
    capturesJson: true,
    summary: chaosTable,
  },
  {
    name: "chaos-scale",
    page: "chaos-scale.md",
    what: "the chaos run at 100,000 events: the witnesses' verdict at the proof's full scale (about an hour on 2 cores)",
    command: "npm run chaos -- --events 100000 --timeout 5400 --json",
    script: "local/chaos/bin/chaos.ts",
    // The diagnostics of every job run more than once, for `npm run chaos -- --explain JOB --from FILE`.
    args: [
      "--json",
      "--events",
      "100000",
      "--timeout",
      "5400",
      "--diagnostics",
      ".tmp/chaos-scale-diagnostics.json",
    ],
    quickArgs: ["--json", "--events", "2000"],
    needsBuild: true,
    capturesJson: true,
    onlyWhenNamed: true,
    summary: chaosTable,
  },
];

const USAGE = `usage: npm run bench [-- --only <part>[,<part>...]] [-- --quick]
parts: ${PARTS.map((p) => (p.onlyWhenNamed ? `${p.name} (only when named)` : p.name)).join(", ")}`;

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
}

/** Runs a child with the terminal's stderr (and stdout, unless it is captured). */
function run(args: readonly string[], captureStdout: boolean): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(tsx, args, {
      cwd: root,
      stdio: ["ignore", captureStdout ? "pipe" : "inherit", "inherit"],
    });
    let stdout = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout }));
  });
}

const reasonOf = (exit: Exit) => (exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`);

/** A page for a part that prints JSON: the command, the machine, whether it passed, and the figures. */
function jsonPage(part: Part, exit: Exit, machine: string, command: string): string {
  let body: string;
  try {
    body = JSON.stringify(JSON.parse(exit.stdout), null, 2);
  } catch (cause) {
    throw new Error(`${part.name} printed no JSON on stdout`, { cause });
  }
  const summary = part.summary
    ? `\`\`\`text\n${part.summary(JSON.parse(exit.stdout))}\n\`\`\`\n\nThe figures:\n\n`
    : "";
  return `# ${part.what}

Generated by \`${command}\` (via \`npm run bench\`), ${machine}. It exited with ${reasonOf(exit)}${exit.code === 0 ? "" : ": an invariant broke or the run failed"}.

${summary}\`\`\`json
${body}
\`\`\`
`;
}

async function main(argv: readonly string[]): Promise<number> {
  const parsed = parseBenchArgs(
    argv,
    PARTS.map((p) => p.name),
  );
  if (!parsed.ok) {
    console.error(`npm run bench: ${parsed.error.message}\n${USAGE}`);
    return 2;
  }
  if (parsed.value.help) {
    console.log(USAGE);
    return 0;
  }
  const { only, quick } = parsed.value;
  const machine = machineNow();
  const selected = selectParts(PARTS, only);
  const statuses = new Map<string, PartStatus>();
  const build = buildOnce();
  for (const part of selected) statuses.set(part.name, await runPart(part, quick, build));
  await writeIndex(argv, statuses, machine, quick);
  printSummary(selected, statuses);
  return [...statuses.values()].some((s) => s.kind === "failed") ? 1 : 0;
}

/** The build (npm start's build step), run once for the first part that needs it; its outcome is kept for the others. */
function buildOnce(): () => Promise<Exit> {
  let built: Exit | undefined;
  return async () => {
    if (!built) {
      console.error("\n== build (turbo run build, dist/ artifacts): the function bundles these parts run");
      built = await run(["scripts/build-quiet.ts"], false);
    }
    return built;
  };
}

/**
 * One part, as a child process: skipped when its script is not in the tree or the build it needs failed;
 * a part that prints JSON has its page written here, and fails when that page cannot be written.
 */
async function runPart(part: Part, quick: boolean, build: () => Promise<Exit>): Promise<PartStatus> {
  if (!existsSync(join(root, part.script))) {
    console.error(`\n== ${part.name}: not present (${part.script} is not in this tree), skipped`);
    return { kind: "not present" };
  }
  const started = performance.now();
  const atStart = machineNow();
  const loadAtStart = atStart.loadAtStart;
  if (part.needsBuild) {
    const built = await build();
    if (built.code !== 0) {
      const reason = `the build failed, ${reasonOf(built)}`;
      console.error(`\n== ${part.name}: skipped, ${reason}`);
      return { kind: "failed", seconds: 0, exitCode: built.code, reason };
    }
  }
  const args = quick ? part.quickArgs : part.args;
  console.error(
    `\n== ${part.name}: ${part.script} ${args.join(" ")} (load average ${loadAtStart.toFixed(1)})`,
  );
  const exit = await run([part.script, ...args], part.capturesJson);
  const seconds = (performance.now() - started) / 1000;
  if (part.capturesJson) {
    // A chaos run that breaks an invariant exits non-zero and still prints its figures: they are the result.
    try {
      const command = `tsx ${part.script} ${args.join(" ")}`.trim();
      await writeFile(join(docs, part.page), jsonPage(part, exit, describeMachine(atStart), command));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      console.error(`== ${part.name}: ${reason}`);
      return { kind: "failed", seconds, exitCode: exit.code, reason };
    }
  }
  console.error(
    `== ${part.name}: ${exit.code === 0 ? "done" : `FAILED, ${reasonOf(exit)}`} in ${seconds.toFixed(0)} s`,
  );
  return exit.code === 0
    ? { kind: "ok", seconds, loadAtStart }
    : { kind: "failed", seconds, exitCode: exit.code, reason: reasonOf(exit) };
}

/**
 * docs/benchmarks/README.md, every part with this run's status or the date its page was last written, then
 * the pages written here formatted by the repository's formatter (npm run lint checks their layout).
 */
async function writeIndex(
  argv: readonly string[],
  statuses: ReadonlyMap<string, PartStatus>,
  machine: Machine,
  quick: boolean,
): Promise<void> {
  const indexFile = join(docs, "README.md");
  const previous = await pageDates(indexFile);
  const command = ["npm run bench", ...(argv.length > 0 ? ["--", ...argv] : [])].join(" ");
  await writeFile(
    indexFile,
    renderIndex(PARTS, statuses, previous, {
      date: machine.startedAt.slice(0, 10),
      command,
      machine: describeMachine(machine),
      quick,
    }),
  );
  const pages = [indexFile, ...PARTS.filter((p) => p.capturesJson).map((p) => join(docs, p.page))];
  await formatMarkdown(pages.filter((p) => existsSync(p)));
}

/** The date of each page as the index last gave it; for a page the index has not listed yet, its own header's. */
async function pageDates(indexFile: string): Promise<Map<string, string>> {
  const previous = existsSync(indexFile)
    ? previousDates(await readFile(indexFile, "utf8"))
    : new Map<string, string>();
  for (const part of PARTS) {
    const page = join(docs, part.page);
    if ((previous.get(part.page) ?? "never") !== "never" || !existsSync(page)) continue;
    const date = /\b20\d\d-\d\d-\d\d\b/.exec(await readFile(page, "utf8"))?.[0];
    if (date) previous.set(part.page, date);
  }
  return previous;
}

/** Each selected part's status on stderr, after every part has run: the one place to look at the end. */
function printSummary(selected: readonly Part[], statuses: ReadonlyMap<string, PartStatus>): void {
  console.error("\nSummary:");
  for (const part of selected) {
    const s = statuses.get(part.name);
    console.error(
      `  ${part.name.padEnd(15)} ${s?.kind ?? "?"}${s?.kind === "failed" ? ` (${s.reason})` : ""}`,
    );
  }
  console.error("wrote docs/benchmarks/README.md");
}

function formatMarkdown(files: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(root, "node_modules/.bin/biome"), ["format", "--write", ...files], {
      cwd: root,
      stdio: "ignore",
    });
    child.on("error", reject);
    child.on("close", () => resolve());
  });
}

process.exitCode = await main(process.argv.slice(2));
