import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createServer as createHttpServer, type IncomingMessage } from "node:http";
import { createServer } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { forward, listenOnLoopback, type RunningEmulator, relay } from "@mcp-pipeline/emulators";

const run = promisify(execFile);

/** The repository's root, where `.ci/moto.sh` lives (this file is packages/testing/src/moto-server.ts). */
const REPO_ROOT = join(import.meta.dirname, "..", "..", "..");

export class MotoServerError extends Error {
  readonly output: string;

  constructor(message: string, output: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "MotoServerError";
    this.output = output;
  }
}

/** A free TCP port on 127.0.0.1 (asked from the OS, then released for moto to take). */
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

/** One real SQS call (ListQueues, JSON protocol) answered 200: moto is serving. */
async function answers(endpoint: string): Promise<boolean> {
  try {
    const response = await fetch(endpoint, {
      method: "POST",
      headers: {
        "content-type": "application/x-amz-json-1.0",
        "x-amz-target": "AmazonSQS.ListQueues",
        authorization:
          "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0",
        "x-amz-date": "20260101T000000Z",
      },
      body: "{}",
    });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/**
 * moto's server (PyPI `moto[server]`, Apache-2.0), installed by `.ci/moto.sh` into the CI tools cache
 * (a second call does nothing) and started on a free 127.0.0.1 port, for the tests that must see AWS's
 * answer where the embedded emulators answer differently. The first one: SQS FIFO. AWS returns several
 * messages of one message group in one receive (esm-semantics.md §3; moto does the same, holding the
 * group while they are in flight); fauxqs returns one message per group per receive, and withholds the
 * group's later messages while that one is in flight, so no proxy in front of it could return them.
 *
 * moto answers concurrent ReceiveMessage calls without a lock: two receives at the same moment can both
 * take messages of one group, which SQS never does. The endpoint returned is therefore a loopback proxy
 * that lets one ReceiveMessage per queue reach moto at a time (every other call passes straight through).
 *
 * Resolves once the server answers a real API call; `stop()` ends the proxy and the process.
 */
export async function startMotoServer(): Promise<RunningEmulator> {
  let executable: string;
  try {
    const { stdout } = await run("bash", [join(REPO_ROOT, ".ci", "moto.sh")], {
      cwd: REPO_ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
    executable = stdout.trim().split("\n").at(-1) ?? "";
  } catch (error) {
    const output = String((error as { stderr?: unknown }).stderr ?? "");
    throw new MotoServerError("installing moto's server with .ci/moto.sh failed", output, { cause: error });
  }

  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(executable, ["-H", "127.0.0.1", "-p", String(port)], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let output = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-8_000);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });

  const stop = async (): Promise<void> => {
    if (hasExited) return;
    child.kill("SIGTERM");
    await exited;
  };

  // Wait for the server to answer (it imports all of moto first: seconds on a loaded machine).
  for (;;) {
    if (hasExited) {
      throw new MotoServerError(`moto_server exited before answering on ${endpoint}`, output);
    }
    if (await answers(endpoint)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    const proxy = await serialisingReceives(endpoint);
    return {
      endpoint: proxy.endpoint,
      stop: async () => {
        await proxy.stop();
        await stop();
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

/** A proxy that queues ReceiveMessage calls per queue, so moto serves them one at a time (see above). */
function serialisingReceives(upstream: string): Promise<RunningEmulator> {
  const tails = new Map<string, Promise<unknown>>();
  const server = createHttpServer(async (request, response) => {
    try {
      const body = await readBody(request);
      const target = String(request.headers["x-amz-target"] ?? "");
      if (target !== "AmazonSQS.ReceiveMessage") {
        await relay(response, await forward(upstream, request, body));
        return;
      }
      let queue = "";
      try {
        queue = String((JSON.parse(body.toString("utf8")) as { QueueUrl?: unknown }).QueueUrl ?? "");
      } catch {
        // Not JSON: every such receive shares one queue of turns.
      }
      const previous = tails.get(queue) ?? Promise.resolve();
      const turn = previous.then(async () => relay(response, await forward(upstream, request, body)));
      const settled = turn.catch(() => undefined);
      tails.set(queue, settled);
      await turn;
      if (tails.get(queue) === settled) tails.delete(queue);
    } catch (error) {
      if (!response.headersSent) {
        response.writeHead(500, { "content-type": "application/x-amz-json-1.0" });
        response.end(JSON.stringify({ __type: "InternalFailure", message: String(error) }));
      }
    }
  });
  return listenOnLoopback(server);
}
