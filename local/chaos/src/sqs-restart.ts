/**
 * The SQS side, restartable: fauxqs persisting to SQLite in a temporary directory (queues, messages,
 * in-flight messages with their visibility deadlines and FIFO sequence counters are restored on restart:
 * fauxqs's README, "Persistence"), behind a front that stays at one address. A restart stops the server
 * and starts a new one on the same data; meanwhile the front drops every connection, as an endpoint that
 * is down does. Nothing in the queues is lost by the restart, as SQS never loses a stored message: a
 * restart of an in-memory emulator would drop messages, which AWS never does, so it would test the
 * emulator, not the pipeline.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import {
  answerWith,
  exchange,
  listenOnLoopback,
  type RunningEmulator,
  readBody,
} from "@mcp-pipeline/emulators";
import { sleep } from "@mcp-pipeline/retry";
import type { SqsExchange } from "./fifo-holds.js";

export interface RestartableSqs extends RunningEmulator {
  /** Connections dropped while the endpoint was down. */
  readonly refused: () => number;
  /** Takes the endpoint down for `outageMs` at least, restarts the emulator on its data, brings it back. */
  restart(outageMs: number): Promise<{ readonly downMs: number }>;
}

interface Fauxqs {
  readonly address: string;
  stop(): Promise<void>;
}

/** fauxqs on `dataDir`, in a thread of its own (sqs-host.mjs). */
function start(dataDir: string): Promise<Fauxqs> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./sqs-host.mjs", import.meta.url), { workerData: { dataDir } });
    worker.once("error", reject);
    worker.once("message", (message: { endpoint: string }) => {
      worker.off("error", reject);
      resolve({
        address: message.endpoint,
        stop: () =>
          new Promise<void>((done) => {
            // Stopped, or gone within two seconds: the data is written through, nothing waits on a flush.
            const timer = setTimeout(() => void worker.terminate().then(() => done()), 2_000);
            worker.once("message", () => {
              clearTimeout(timer);
              void worker.terminate().then(() => done());
            });
            worker.postMessage("stop");
          }),
      });
    });
  });
}

/**
 * `onExchange` sees every exchange the front passed on and its answer, as the requester got it: the
 * harness's witness of what SQS did (fifo-holds.ts), which no function can reach.
 */
export async function startRestartableSqs(
  onExchange: (exchange: SqsExchange) => void = () => {},
): Promise<RestartableSqs> {
  const dataDir = await mkdtemp(join(tmpdir(), "mcp-chaos-sqs-"));
  let server: Fauxqs | undefined = await start(dataDir);
  let refused = 0;
  const front = createServer(async (request, response) => {
    const body = await readBody(request).catch(() => undefined);
    const upstream = server;
    if (!upstream || body === undefined) {
      refused += 1;
      // What a client meets when nothing listens: the connection ends without an answer.
      request.socket.destroy();
      return;
    }
    try {
      // Queue URLs name the queue by path, so they stay valid on the restarted server's new port.
      const answer = await exchange(upstream.address, request, body);
      const target = request.headers["x-amz-target"];
      if (typeof target === "string")
        onExchange({ target, request: body, status: answer.status, answer: answer.body, at: Date.now() });
      answerWith(response, answer);
    } catch {
      refused += 1;
      request.socket.destroy();
    }
  });
  const running = await listenOnLoopback(front);
  return {
    endpoint: running.endpoint,
    refused: () => refused,
    async restart(outageMs) {
      const began = Date.now();
      const old = server;
      server = undefined;
      await old?.stop();
      await sleep(outageMs);
      server = await start(dataDir);
      return { downMs: Date.now() - began };
    },
    async stop() {
      await running.stop();
      await server?.stop();
      server = undefined;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
