import { createServer, type IncomingMessage } from "node:http";
import { forward, listenOnLoopback, type RunningEmulator, relay } from "@mcp-pipeline/emulators";

/**
 * SQS's message counts are eventually consistent: "The ApproximateNumberOfMessagesDelayed,
 * ApproximateNumberOfMessagesNotVisible, and ApproximateNumberOfMessages metrics may not achieve
 * consistency until at least 1 minute after the producers stop sending messages" (Amazon SQS API
 * reference, GetQueueAttributes). fauxqs answers them exactly. For a queue marked with `lag`, this proxy
 * keeps answering the counts SQS gave at the first GetQueueAttributes after the mark, as a queue whose
 * metadata has not caught up yet. Only the JSON protocol (the SDK's default) is read.
 */
export interface LaggingCountProxy extends RunningEmulator {
  readonly lag: (queueUrl: string) => void;
}

const COUNTS = [
  "ApproximateNumberOfMessages",
  "ApproximateNumberOfMessagesNotVisible",
  "ApproximateNumberOfMessagesDelayed",
] as const;

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

export function startSqsLaggingCountProxy(upstream: string): Promise<LaggingCountProxy> {
  const lagging = new Set<string>();
  const frozen = new Map<string, Partial<Record<(typeof COUNTS)[number], string>>>();
  const server = createServer(async (request, response) => {
    try {
      const body = await readBody(request);
      const target = String(request.headers["x-amz-target"] ?? "");
      const upstreamResponse = await forward(upstream, request, body);
      if (target !== "AmazonSQS.GetQueueAttributes" || !upstreamResponse.ok) {
        await relay(response, upstreamResponse);
        return;
      }
      const queueUrl = String((JSON.parse(body.toString("utf8")) as { QueueUrl?: string }).QueueUrl ?? "");
      const answer = JSON.parse(await upstreamResponse.text()) as { Attributes?: Record<string, string> };
      if (lagging.has(queueUrl) && answer.Attributes) {
        const seen = frozen.get(queueUrl);
        if (seen === undefined) {
          frozen.set(
            queueUrl,
            Object.fromEntries(
              COUNTS.filter((c) => answer.Attributes?.[c] !== undefined).map((c) => [
                c,
                answer.Attributes?.[c],
              ]),
            ),
          );
        } else {
          for (const c of COUNTS) {
            const value = seen[c];
            if (value !== undefined && c in answer.Attributes) answer.Attributes[c] = value;
          }
        }
      }
      response.writeHead(200, { "content-type": "application/x-amz-json-1.0" });
      response.end(JSON.stringify(answer));
    } catch (error) {
      response.writeHead(500, { "content-type": "application/x-amz-json-1.0" });
      response.end(JSON.stringify({ __type: "InternalFailure", message: String(error) }));
    }
  });
  return listenOnLoopback(server).then((running) => ({
    ...running,
    lag: (queueUrl) => {
      lagging.add(queueUrl);
    },
  }));
}
