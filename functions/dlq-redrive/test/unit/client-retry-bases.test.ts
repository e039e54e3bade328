import { loadConfig } from "@mcp-pipeline/aws";
import type { Sandbox } from "@mcp-pipeline/batch/consumer-shell";
import { afterEach, describe, expect, it, vi } from "vitest";
import { expectedDelays, firstRetryDelays, fixJitter } from "../../../../packages/aws/test/client-retry.js";
import { dlqRedriveConfigSchema } from "../../src/config.js";
import { wire } from "../../src/handler.js";

// Every client the handler's `wire` builds backs off from the function's declared SDK retry bases
// (SDK_RETRY_BASE_MS, SDK_THROTTLE_RETRY_BASE_MS; packages/aws/src/sdk-retry.ts): one that forgot them
// would wait the SDK's own 1 s after a throttling error on a scaled local stack. Unusual bases (7 and
// 13 ms), the jitter fixed, and each client's own retry strategy asked what it waits: no request, no clock.

const env = {
  QUARANTINE_BUCKET: "quarantine",
  STREAM_NAME: "events",
  DEAD_LETTER_QUEUE_URL: "https://sqs.eu-west-1.amazonaws.com/123456789012/failures-dlq",
  SDK_RETRY_BASE_MS: "7",
  SDK_THROTTLE_RETRY_BASE_MS: "13",
};

const sandbox: Sandbox = {
  logger: { debug() {}, info() {}, warn() {}, error() {} } as unknown as Sandbox["logger"],
  functionName: "dlq-redrive",
};

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the dlq-redrive function's clients", () => {
  it("back off from its declared SDK retry bases: S3, Kinesis and the lazy SQS client", async () => {
    fixJitter();
    const { clients } = wire(loadConfig(dlqRedriveConfigSchema, env), sandbox);
    const expected = expectedDelays({ baseMs: 7, throttlingBaseMs: 13 });
    expect(await firstRetryDelays(clients.s3), "S3").toEqual(expected);
    expect(await firstRetryDelays(clients.kinesis), "Kinesis").toEqual(expected);
    // The SQS client loads on the first send to the DLQ: loaded here.
    expect(await firstRetryDelays(await clients.sqs()), "SQS").toEqual(expected);
  });
});
