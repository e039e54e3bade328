import { join } from "node:path";
import { PutRecordsCommand } from "@aws-sdk/client-kinesis";
import { CURRENT_SPEC_VERSION, encodeLifecycleEvent } from "@mcp-pipeline/contracts";
import { bundleAll } from "@mcp-pipeline/emulators/testing";
import { loadSettings } from "@mcp-pipeline/settings";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalPipeline } from "../../src/index.js";

/**
 * The functions' AWS SDK retry backoff is a declared duration (SDK_RETRY_BASE_MS, SDK_THROTTLE_RETRY_BASE_MS
 * in function-environment.json), so the local stack divides it by its time scale like the others
 * (docs/local-runtime.md, "Time scale"). Here the processor's writes of some calls are refused as throttles
 * at its DynamoDB proxy, as the chaos run refuses a stuck event's, and the proxy times the SDK's three tries
 * of each: at /10 the throttling base is 100 ms, so the two waits are at most 100 + 200 ms, where the
 * SDK's own 1 s base would draw them from 0-1 s and 0-2 s.
 */
const root = join(import.meta.dirname, "../../../..");
const SCALE = 10;
const CALLS = Array.from({ length: 6 }, (_, i) => `sdk-retry-${i}`);

let dist: string;
let pipeline: LocalPipeline | undefined;
/** When each refused write of each call reached the proxy (performance.now()). */
const refusedAt = new Map<string, number[]>();

beforeAll(async () => {
  dist = await bundleAll();
}, 300_000);
afterAll(async () => {
  await pipeline?.stop();
});

describe("the local stack scales the functions' SDK retry backoff", () => {
  it("gives the processor the scaled throttling base, and its SDK's retries wait that", async () => {
    const settings = await loadSettings(root, "dev");
    pipeline = new LocalPipeline({
      settings,
      timeScale: SCALE,
      distDir: dist,
      onLog: () => {},
      processorDynamoDbFault: (target, body) => {
        if (!(target.endsWith(".PutItem") || target.endsWith(".TransactWriteItems"))) return undefined;
        const call = CALLS.find((id) => body.includes(`"${id}"`));
        if (call === undefined) return undefined;
        refusedAt.set(call, [...(refusedAt.get(call) ?? []), performance.now()]);
        return {
          status: 400,
          type: "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
          message: "Throughput exceeded (injected by sdk-retry-scale.test.ts)",
        };
      },
    });
    await pipeline.start();
    const environment = pipeline.functions.get("processor")?.definition.environment ?? {};
    expect(environment.SDK_THROTTLE_RETRY_BASE_MS).toBe(
      String(settings.processor.sdk_throttle_retry_base_ms / SCALE),
    );
    expect(environment.SDK_RETRY_BASE_MS).toBe(String(settings.processor.sdk_retry_base_ms / SCALE));

    await pipeline.kinesis.send(
      new PutRecordsCommand({
        StreamName: pipeline.names.stream,
        Records: CALLS.map((callId) => ({
          // One session per call: each is its own partition key, processed side by side in one batch.
          PartitionKey: `session-${callId}`,
          Data: new TextEncoder().encode(
            encodeLifecycleEvent({
              specVersion: CURRENT_SPEC_VERSION,
              type: "tool_call.requested",
              eventId: `${callId}-requested`,
              callId,
              sessionId: `session-${callId}`,
              tool: "text.stats",
              occurredAt: new Date().toISOString(),
              argumentsDigest: "0".repeat(64),
            }),
          ),
        })),
      }),
    );
    const until = Date.now() + 120_000;
    while (CALLS.some((id) => (refusedAt.get(id)?.length ?? 0) < 3) && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The first three refusals of a call are one request's three tries (the clients' maxAttempts): the
    // time from the first to the third is the SDK's two waits, plus two round trips through the proxy.
    const waited = CALLS.map((id) => {
      const [first, , third] = refusedAt.get(id) ?? [];
      expect(third, `${id} was refused three times`).toBeDefined();
      return (third as number) - (first as number);
    });
    // At most 300 ms of waits (100 + 200) with 500 ms for the round trips on a loaded machine. With the SDK's
    // 1 s base, each call stays under 800 ms with probability 0.16: all six, 2 x 10^-5.
    for (const ms of waited) expect(ms).toBeLessThan(800);
  }, 300_000);
});
