/**
 * moto's server (installed by .ci/moto.sh) on a free 127.0.0.1 port, one per Terraform root so that each
 * root starts from an empty account. Ready when its own API answers, not after a timer.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";

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

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
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
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  let output = "";
  const child: ChildProcess = spawn(motoServer, ["-H", "127.0.0.1", "-p", String(port)], {
    stdio: ["ignore", "pipe", "pipe"],
    // AWS-managed IAM policies (bootstrap attaches ReadOnlyAccess) exist in moto only when loaded.
    env: { ...process.env, MOTO_IAM_LOAD_MANAGED_POLICIES: "true" },
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
  // Polls until the server answers or its process exits; the loop has no deadline of its own (a
  // machine under load only makes it slower), the caller's CI timeout bounds it.
  while (!(await answers(endpoint))) {
    if (gone) throw new MotoError(`moto_server exited before answering on ${endpoint}`, output);
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
