import type { RunningEmulator } from "../loopback.js";
import { startMoto } from "../moto.js";
import { AwsJsonContentType, behindProxy, relay, startAwsJsonProxy } from "../proxy.js";

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
  return behindProxy(await startMoto(), serialisingReceives);
}

/** A proxy that queues ReceiveMessage calls per queue, so moto serves them one at a time (see above). */
function serialisingReceives(upstream: string): Promise<RunningEmulator> {
  const tails = new Map<string, Promise<unknown>>();
  return startAwsJsonProxy(upstream, AwsJsonContentType.V1_0, async (call) => {
    if (call.target !== "AmazonSQS.ReceiveMessage") return call.pass();
    let queue = "";
    try {
      queue = String((JSON.parse(call.body.toString("utf8")) as { QueueUrl?: unknown }).QueueUrl ?? "");
    } catch {
      // Not JSON: every such receive shares one queue of turns.
    }
    const previous = tails.get(queue) ?? Promise.resolve();
    const turn = previous.then(async () => relay(call.response, await call.forward()));
    const settled = turn.catch(() => undefined);
    tails.set(queue, settled);
    await turn;
    if (tails.get(queue) === settled) tails.delete(queue);
  });
}
