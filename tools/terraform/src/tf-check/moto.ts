/**
 * moto's server (installed by .ci/moto.sh) on a 127.0.0.1 port of its own, one per Terraform root so that
 * each root starts from an empty account. moto binds port 0 itself (the kernel picks a free port) and the
 * port is read from its "Running on" line: a port found free beforehand and passed to moto could be taken
 * by another process in between (the roots start side by side, other jobs share the machine), and the
 * check would then talk to that process. Ready when its own API answers, not after a timer.
 */
import { type ChildProcess, spawn } from "node:child_process";

export interface Moto {
  readonly endpoint: string;
  readonly log: () => string;
  stop(): Promise<void>;
}

export class MotoError extends Error {
  override readonly name = "MotoError";
  constructor(
    message: string,
    readonly log: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Werkzeug's startup line, "* Running on http://127.0.0.1:40643", with the port the kernel gave. */
const RUNNING_ON = /Running on http:\/\/127\.0\.0\.1:(\d+)/;

export function listeningPort(log: string): number | null {
  const match = RUNNING_ON.exec(log);
  return match === null ? null : Number(match[1]);
}

async function answers(endpoint: string): Promise<boolean> {
  try {
    const res = await fetch(`${endpoint}/moto-api/data.json`);
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

export async function startMoto(motoServer: string): Promise<Moto> {
  let output = "";
  const child: ChildProcess = spawn(motoServer, ["-H", "127.0.0.1", "-p", "0"], {
    stdio: ["ignore", "pipe", "pipe"],
    // No AWS-managed IAM policies loaded: no root attaches one (npm run iam:check refuses a role that
    // does, since what it grants is not in the plan).
    env: process.env,
  });
  child.stdout?.on("data", (c: Buffer) => {
    output += c.toString("utf8");
  });
  child.stderr?.on("data", (c: Buffer) => {
    output += c.toString("utf8");
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  // Polls until the server has said its port and answers on it, or its process exits; the loop has no
  // deadline of its own (a machine under load only makes it slower), the caller's CI timeout bounds it.
  let endpoint = "";
  for (;;) {
    const port = listeningPort(output);
    if (port !== null) {
      endpoint = `http://127.0.0.1:${port}`;
      if (await answers(endpoint)) break;
    }
    if (gone)
      throw new MotoError(
        `moto_server exited before answering${port === null ? "" : ` on ${endpoint}`}`,
        output,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    endpoint,
    log: () => output,
    stop: async () => {
      if (!gone) {
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}
