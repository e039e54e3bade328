import { createServer as createHttpServer, type IncomingMessage } from "node:http";
import { forward, listenOnLoopback, type RunningEmulator, relay, startMoto } from "@mcp-pipeline/emulators";

/**
 * moto's server (@mcp-pipeline/emulators' startMoto: installed by `.ci/moto.sh`, on a free 127.0.0.1
 * port) behind a proxy, for the tests that must see SQS FIFO as AWS answers it. AWS returns several
 * messages of one message group in one receive (docs/aws-semantics.md §3; moto does the same, holding the
 * group while they are in flight); fauxqs returns one message per group per receive, and withholds the
 * group's later messages while that one is in flight, so no proxy in front of it could return them.
 *
 * moto answers concurrent ReceiveMessage calls without a lock: two receives at the same moment can both
 * take messages of one group, which SQS never does. The endpoint returned is therefore a loopback proxy
 * that lets one ReceiveMessage per queue reach moto at a time (every other call passes straight through).
 */
export async function startMotoServer(): Promise<RunningEmulator> {
  const moto = await startMoto();
  try {
    const proxy = await serialisingReceives(moto.endpoint);
    return {
      endpoint: proxy.endpoint,
      stop: async () => {
        await proxy.stop();
        await moto.stop();
      },
    };
  } catch (error) {
    await moto.stop();
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
