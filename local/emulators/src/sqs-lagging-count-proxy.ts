import type { RunningEmulator } from "./loopback.js";
import { AwsJsonContentType, relay, startAwsJsonProxy } from "./proxy.js";

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

export function startSqsLaggingCountProxy(upstream: string): Promise<LaggingCountProxy> {
  const lagging = new Set<string>();
  const frozen = new Map<string, Partial<Record<(typeof COUNTS)[number], string>>>();
  return startAwsJsonProxy(upstream, AwsJsonContentType.V1_0, async (call) => {
    const upstreamResponse = await call.forward();
    if (call.target !== "AmazonSQS.GetQueueAttributes" || !upstreamResponse.ok) {
      await relay(call.response, upstreamResponse);
      return;
    }
    const queueUrl = String((JSON.parse(call.body.toString("utf8")) as { QueueUrl?: string }).QueueUrl ?? "");
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
    call.answerJson(200, answer);
  }).then((running) => ({
    ...running,
    lag: (queueUrl) => {
      lagging.add(queueUrl);
    },
  }));
}
