/**
 * moto's server (PyPI `moto[server]`, Apache-2.0) as a second AWS API endpoint for tests: one HTTP
 * port serving DynamoDB, Kinesis, SQS and S3 with answers modelled on AWS's, where the embedded
 * emulators are kinder (docs/emulator-fidelity.md). `.ci/moto.sh` installs the pinned version into a
 * cache virtualenv (the first call takes ~45 s, later calls under a second).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createServer } from "node:net";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { backoffDelayMs, retry } from "@mcp-pipeline/retry";
import type { RunningEmulator } from "./loopback.js";

/** moto could not be installed or started; `output` holds what the installer or the server printed. */
export class MotoStartError extends Error {
  readonly output: string;

  constructor(message: string, output: string, options?: ErrorOptions) {
    super(`${message}${output ? `\n${output.trim().split("\n").slice(-20).join("\n")}` : ""}`, options);
    this.name = "MotoStartError";
    this.output = output;
  }
}

export interface RunningMoto extends RunningEmulator {
  /** The server's process id, which is also its process group's id. */
  readonly pid: number;
  /** Forgets every resource (moto's /moto-api/reset), so one server can serve several test files' setups. */
  reset(): Promise<void>;
}

function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, ".ci", "moto.sh"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new MotoStartError("cannot find .ci/moto.sh above local/emulators", "");
    dir = parent;
  }
  return dir;
}

let installed: Promise<string> | undefined;

/**
 * The path of `moto_server`, installing it on first use. Test files run in parallel workers and
 * processes; `flock` on a file in the tools cache makes one install at a time (the kernel drops the
 * lock if its holder dies, so no stale lock is left behind), and the others then find it installed.
 */
export function motoServerPath(): Promise<string> {
  installed ??= (async () => {
    const tools = process.env.CI_TOOLS_DIR ?? join(homedir(), ".cache", "mcp-event-pipelines-ci");
    await mkdir(tools, { recursive: true });
    const script = join(repositoryRoot(), ".ci", "moto.sh");
    return new Promise<string>((resolve, reject) => {
      execFile(
        "flock",
        [join(tools, "moto.lock"), "bash", script],
        { maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => {
          const path = stdout.trim().split("\n").at(-1) ?? "";
          if (error || !path)
            reject(new MotoStartError(".ci/moto.sh failed", `${stderr}${stdout}`, { cause: error }));
          else resolve(path);
        },
      );
    });
  })();
  installed.catch(() => {
    installed = undefined;
  });
  return installed;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves when moto answers an HTTP request; rejects if the process exits first. */
async function answering(endpoint: string, child: ChildProcess, output: () => string): Promise<void> {
  let exited: number | null | undefined;
  child.once("exit", (code) => {
    exited = code;
  });
  await retry(
    async () => {
      if (exited !== undefined)
        throw new MotoStartError(`moto_server exited (${exited}) before answering`, output());
      const response = await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(5_000) });
      await response.arrayBuffer();
    },
    {
      maxAttempts: Number.POSITIVE_INFINITY,
      delayMs: (retry) => backoffDelayMs(retry, { baseMs: 50, capMs: 500 }),
      retryable: (error) => !(error instanceof MotoStartError),
    },
  );
}

function stopProcessGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined)
    return Promise.resolve();
  const pid = child.pid;
  return new Promise<void>((resolve) => {
    // A negative pid signals the whole group: moto_server and anything it started (werkzeug's reloader).
    const escalate = setTimeout(() => {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // already gone
      }
    }, 5_000);
    child.once("exit", () => {
      clearTimeout(escalate);
      resolve();
    });
    try {
      process.kill(-pid, "SIGTERM");
    } catch {
      clearTimeout(escalate);
      resolve();
    }
  });
}

/**
 * Starts moto's server on a free 127.0.0.1 port in its own process group (installing it on first use)
 * and resolves once it answers; `stop()` ends the group. A process exit of the test runner also ends it.
 */
export async function startMoto(): Promise<RunningMoto> {
  const server = await motoServerPath();
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const endpoint = `http://127.0.0.1:${port}`;
    let output = "";
    const child = spawn(server, ["-H", "127.0.0.1", "-p", String(port)], {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, AWS_DEFAULT_REGION: "us-east-1", MOTO_ALLOW_NONEXISTENT_REGION: "true" },
    });
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString("utf8")).slice(-20_000);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    const onExit = () => {
      if (child.pid !== undefined && child.exitCode === null) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    };
    process.once("exit", onExit);
    try {
      await answering(endpoint, child, () => output);
    } catch (error) {
      lastError = error;
      process.off("exit", onExit);
      await stopProcessGroup(child);
      continue; // the port may have been taken between probing and binding
    }
    return {
      endpoint,
      pid: child.pid ?? 0,
      reset: async () => {
        const response = await fetch(`${endpoint}/moto-api/reset`, { method: "POST" });
        await response.arrayBuffer();
        if (!response.ok) throw new MotoStartError(`moto reset answered ${response.status}`, output);
      },
      stop: async () => {
        process.off("exit", onExit);
        await stopProcessGroup(child);
      },
    };
  }
  throw lastError;
}
