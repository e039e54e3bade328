import { loadConfig } from "@mcp-pipeline/aws";
import type { Sandbox } from "@mcp-pipeline/batch/consumer-shell";
import { kinesisRecord } from "@mcp-pipeline/emulators/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  clientsSentThrough,
  expectedDelays,
  expectedDynamoDbDelays,
  firstRetryDelays,
  fixJitter,
} from "../../../../packages/aws/test/client-retry.js";
import { processorConfigSchema } from "../../src/config.js";
import { wire } from "../../src/handler.js";

// Every client the handler's `wire` builds backs off from the function's declared SDK retry bases
// (SDK_RETRY_BASE_MS, SDK_THROTTLE_RETRY_BASE_MS; packages/aws/src/sdk-retry.ts): one that forgot them
// would wait the SDK's own 1 s after a throttling error on a scaled local stack. Unusual bases (7 and
// 13 ms), the jitter fixed, each client caught at its first request (refused there) and its own retry
// strategy asked what it waits: no request leaves, no clock is read.

const env = {
  TOOL_CALLS_TABLE: "tool-calls",
  QUARANTINE_BUCKET: "quarantine",
  SDK_RETRY_BASE_MS: "7",
  SDK_THROTTLE_RETRY_BASE_MS: "13",
};
const bases = { baseMs: 7, throttlingBaseMs: 13 };

const sandbox: Sandbox = {
  logger: { debug() {}, info() {}, warn() {}, error() {} } as unknown as Sandbox["logger"],
  functionName: "processor",
};

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the processor's clients", () => {
  it("back off from its declared SDK retry bases: DynamoDB and the lazy quarantine S3 client", async () => {
    fixJitter();
    const deps = wire(loadConfig(processorConfigSchema, env), sandbox);

    const [dynamo, ...moreDynamo] = await clientsSentThrough(() => deps.toolCalls.prefetch(["call-1"]));
    expect(moreDynamo).toEqual([]);
    // DynamoDB's transient base keeps its proportion to the others' (25 to 50 ms in the SDK).
    expect(await firstRetryDelays(dynamo as NonNullable<typeof dynamo>), "DynamoDB").toEqual(
      expectedDynamoDbDelays(bases),
    );

    // The S3 client loads with the quarantine writer on the first bad record: one is quarantined here.
    const record = kinesisRecord({ partitionKey: "session-1", sequence: 1, data: "not an event" });
    const [s3, ...moreS3] = await clientsSentThrough(() =>
      deps.quarantine(record, { code: "InvalidEvent", message: "not an event" }),
    );
    expect(moreS3).toEqual([]);
    expect(await firstRetryDelays(s3 as NonNullable<typeof s3>), "quarantine S3").toEqual(
      expectedDelays(bases),
    );
  });
});
