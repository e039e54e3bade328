import { loadConfig } from "@mcp-pipeline/aws";
import type { Sandbox } from "@mcp-pipeline/batch/consumer-shell";
import { CURRENT_SPEC_VERSION, type ToolCallLifecycleEvent } from "@mcp-pipeline/contracts";
import { sqsRecord } from "@mcp-pipeline/emulators/testing";
import { ToolRegistry } from "@mcp-pipeline/tools/registry";
import { compileWithAjv } from "@mcp-pipeline/tools/registry/ajv";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  clientsSentThrough,
  expectedDelays,
  expectedDynamoDbDelays,
  firstRetryDelays,
  fixJitter,
  type SdkClient,
} from "../../../aws/test/client-retry.js";
import { QueueMode, type WorkerFunction, workerConfigSchema, workerConsumer } from "../../src/index.js";
import { good } from "../config-cases.js";

// Every client a worker's `wire` (workerConsumer, the tool-worker's and the fifo-worker's) builds backs off
// from the function's declared SDK retry bases (SDK_RETRY_BASE_MS, SDK_THROTTLE_RETRY_BASE_MS;
// packages/aws/src/sdk-retry.ts): one that forgot them would wait the SDK's own 1 s after a throttling
// error on a scaled local stack. Unusual bases (7 and 13 ms), the jitter fixed, each client caught at its
// first request (refused there) and its own retry strategy asked what it waits: no request leaves, no clock
// is read. The lazy clients (S3, and SQS for the DLQ and for visibility changes) load in the test, through
// the path that loads them in a function.

const bases = { baseMs: 7, throttlingBaseMs: 13 };

const sandbox: Sandbox = {
  logger: { debug() {}, info() {}, warn() {}, error() {} } as unknown as Sandbox["logger"],
  functionName: "worker",
};

const event: ToolCallLifecycleEvent = {
  specVersion: CURRENT_SPEC_VERSION,
  eventId: "event-1",
  sessionId: "session-1",
  callId: "call-1",
  tool: "test.echo",
  occurredAt: "2026-12-08T00:00:00.000Z",
  type: "tool_call.started",
  attempt: 1,
};

/** The one client `trigger` sends through. */
async function onlyClientOf(trigger: (signal: AbortSignal) => Promise<unknown>): Promise<SdkClient> {
  const clients = await clientsSentThrough(trigger);
  expect(clients).toHaveLength(1);
  return clients[0] as SdkClient;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a worker's clients", () => {
  it.each([
    ["tool_worker", QueueMode.Standard],
    ["fifo_worker", QueueMode.Fifo],
  ] as const)(
    "back off from its declared SDK retry bases (%s): DynamoDB, S3, Kinesis, SQS",
    async (fn: WorkerFunction, mode) => {
      fixJitter();
      const schema = workerConfigSchema(fn);
      const config = loadConfig(schema, {
        ...good,
        SDK_RETRY_BASE_MS: String(bases.baseMs),
        SDK_THROTTLE_RETRY_BASE_MS: String(bases.throttlingBaseMs),
      });
      const deps = workerConsumer({
        service: fn,
        mode,
        config: schema,
        registry: () => new ToolRegistry([], compileWithAjv()),
      }).wire(config, sandbox);
      const expected = expectedDelays(bases);

      // DynamoDB's transient base keeps its proportion to the others' (25 to 50 ms in the SDK).
      const toolCalls = await onlyClientOf(() => deps.toolCalls.prefetch(["call-1"]));
      expect(await firstRetryDelays(toolCalls), "DynamoDB (tool calls)").toEqual(
        expectedDynamoDbDelays(bases),
      );
      const idempotency = await onlyClientOf(() => deps.idempotency.claim("job-1", 1_000));
      expect(await firstRetryDelays(idempotency), "DynamoDB (idempotency)").toEqual(
        expectedDynamoDbDelays(bases),
      );

      // Only a result over the inline limit goes to S3: the client loads then.
      const s3 = await onlyClientOf(() =>
        deps.placeResult("call-1", JSON.stringify("x".repeat(config.RESULT_INLINE_MAX_BYTES))),
      );
      expect(await firstRetryDelays(s3), "S3").toEqual(expected);

      // The producer's next round would wait on the clock: the signal stops it at the first refusal.
      const kinesis = await onlyClientOf((signal) => deps.publish([event], { signal }));
      expect(await firstRetryDelays(kinesis), "Kinesis").toEqual(expected);

      // A poison message loads the DLQ's SQS client.
      const dlq = await onlyClientOf(() =>
        deps.deadLetter(sqsRecord({ messageId: "m-1", body: "not a job" }), {
          code: "InvalidJob",
          message: "not a job",
        }),
      );
      expect(await firstRetryDelays(dlq), "DLQ SQS").toEqual(expected);

      // A job reported for retry loads the visibility changes' SQS client.
      const { redelivery } = deps;
      if (redelivery === undefined) throw new Error("the worker wired no redelivery");
      const visibility = await onlyClientOf(() =>
        redelivery.changeVisibility(
          good.DEAD_LETTER_QUEUE_URL,
          [{ messageId: "m-1", receiptHandle: "receipt-1", visibilityTimeoutSeconds: 1 }],
          new AbortController().signal,
        ),
      );
      expect(await firstRetryDelays(visibility), "visibility SQS").toEqual(expected);
    },
  );
});
