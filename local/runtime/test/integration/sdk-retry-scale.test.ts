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
 * at its DynamoDB proxy, as the chaos run refuses a stuck event's: the processor is given the scaled bases,
 * and each refused write is tried the clients' three times through the local stack.
 *
 * How long the SDK waits between those tries is not asserted here: a wall-clock bound fails on a busy
 * machine. What the bases make the clients wait is tested without a clock, the jitter's draw fixed
 * (packages/aws test/unit/sdk-retry.test.ts; that every client each function wires gets them: each function's
 * test/unit/client-retry-bases.test.ts), and what the scaled waits do to a run is measured
 * by the chaos run (docs/benchmarks/ceiling.md, "The retry waits at the run's time scale").
 */
const root = join(import.meta.dirname, "../../../..");
const SCALE = 10;
const CALLS = Array.from({ length: 6 }, (_, i) => `sdk-retry-${i}`);

let dist: string;
let pipeline: LocalPipeline | undefined;
/** How many of each call's writes the proxy refused. */
const refused = new Map<string, number>();

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
        refused.set(call, (refused.get(call) ?? 0) + 1);
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
    while (CALLS.some((id) => (refused.get(id) ?? 0) < 3) && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Every refused call was tried at least three times: one request's three tries (the clients'
    // maxAttempts), then the mapping's retries of the batch.
    for (const id of CALLS) {
      expect(
        refused.get(id) ?? 0,
        `${id}'s refused tries (out of time after 120 s if fewer)`,
      ).toBeGreaterThanOrEqual(3);
    }
  }, 300_000);
});
