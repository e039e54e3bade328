/**
 * The commands that run the function bundles: `npm start`, `npm run chaos` and
 * `npm run bench:local-pipeline`. Each one's command line (and, where it has one, its environment and
 * settings file) is checked first, so a bad option is refused before the build and is the last thing on
 * the screen; then the bundles are built (turbo, cached, quietly: lib/build-quietly.ts) unless `--dist`
 * names zips already built; then the command runs in this process.
 *
 *   node --import tsx scripts/build-first.ts <start|chaos|bench:local-pipeline> [options...]
 *
 * package.json starts it with `exec`, so that npm's child is this process: a `kill` of npm's PID reaches
 * it (npm passes SIGTERM on to its child; a shell between them would die without passing it on), and the
 * stack stops instead of serving on, orphaned.
 */
import { join } from "node:path";
import { ExitCode, refuseInOneLine, UsageError } from "@mcp-pipeline/cli";
import { loadSettings, SettingsError } from "@mcp-pipeline/settings";
import { buildQuietly, stopBuild } from "./lib/build-quietly.ts";

const root = join(import.meta.dirname, "..");

/** What a command's check decided: end with a status (refused, --help), or build if needed and run. */
type Checked =
  | { readonly kind: "exit"; readonly code: number }
  | { readonly kind: "run"; readonly build: boolean; readonly run: () => Promise<number> };

const COMMANDS: Readonly<Record<string, (argv: readonly string[]) => Promise<Checked>>> = {
  async start(argv) {
    const { prepare, run } = await import("@mcp-pipeline/local-runtime");
    const prepared = await prepare(argv);
    if (prepared.kind === "exit") return prepared;
    const { options, settings } = prepared;
    return { kind: "run", build: options.distDir === undefined, run: () => run(options, settings) };
  },

  async chaos(argv) {
    const { main, parseCli } = await import("@mcp-pipeline/chaos");
    let options: ReturnType<typeof parseCli>;
    try {
      options = parseCli(argv, process.env);
    } catch (error) {
      return { kind: "exit", code: refuseInOneLine(error, "npm run chaos -- --help") };
    }
    if (options.help) return { kind: "exit", code: await main(argv) };
    // The chaos run reads the environment's settings once it starts: a missing or broken file is refused
    // here, before the build, as it would be after it.
    try {
      await loadSettings(root, options.env);
    } catch (error) {
      if (error instanceof SettingsError) {
        process.stderr.write(`--env ${options.env}: ${error.message}\n`);
        return { kind: "exit", code: ExitCode.Usage };
      }
      throw error;
    }
    return { kind: "run", build: options.distDir === undefined, run: () => main(argv) };
  },

  async "bench:local-pipeline"(argv) {
    const { main, parseBenchCli, USAGE } = await import("../tools/bench/src/local-pipeline.ts");
    let options: ReturnType<typeof parseBenchCli>;
    try {
      options = parseBenchCli(argv);
    } catch (error) {
      return { kind: "exit", code: refuseInOneLine(error, "npm run bench:local-pipeline -- --help") };
    }
    if (options.help) {
      process.stdout.write(`${USAGE}\n`);
      return { kind: "exit", code: ExitCode.Ok };
    }
    return { kind: "run", build: true, run: () => main(options) };
  },
};

/** Builds; a stop request meanwhile ends the build's step and the command with the signal's status. */
async function build(): Promise<number | undefined> {
  let stopped: NodeJS.Signals | undefined;
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  const handlers = signals.map((signal) => {
    const handler = () => {
      stopped = signal;
      stopBuild(signal);
    };
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  try {
    const built = await buildQuietly(root);
    if (stopped) return 128 + (stopped === "SIGINT" ? 2 : stopped === "SIGTERM" ? 15 : 1);
    if (!built.ok) {
      process.stderr.write(`${built.output}\n`);
      return built.code;
    }
    return undefined;
  } finally {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
}

async function buildFirst(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = name === undefined ? undefined : COMMANDS[name];
  if (command === undefined) {
    process.stderr.write(
      `${new UsageError(`build-first.ts runs one of: ${Object.keys(COMMANDS).join(", ")} (got ${name ?? "nothing"})`).message}\n`,
    );
    return ExitCode.Usage;
  }
  const checked = await command(rest);
  if (checked.kind === "exit") return checked.code;
  if (checked.build) {
    const failed = await build();
    if (failed !== undefined) return failed;
  }
  return checked.run();
}

buildFirst(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(ExitCode.Failed);
  },
);
