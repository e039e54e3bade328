import { lambdaContext } from "@mcp-pipeline/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { manualActionSchema } from "../src/config.js";
import { handler } from "../src/index.js";

afterEach(() => vi.unstubAllEnvs());

describe("dlq-redrive handler: bad events and configuration", () => {
  it.each([
    ["no event", undefined],
    ["an unknown action", { action: "delete-everything" }],
    ["a replay with a bad time", { action: "replay", filter: { since: "yesterday" } }],
    ["a redrive without queue URLs", { action: "redrive-dlq" }],
  ])("refuses %s with InvalidEventError", async (_label, event) => {
    await expect(handler(event, lambdaContext({ functionName: "dlq-redrive" }))).rejects.toMatchObject({
      name: "InvalidEventError",
    });
  });

  it("manual actions are dry runs unless asked otherwise", () => {
    expect(manualActionSchema.parse({ action: "replay" })).toMatchObject({
      dryRun: true,
      ratePerSecond: 100,
    });
  });

  it("fails loudly, naming every missing setting, on an SQS batch without configuration", async () => {
    vi.stubEnv("QUARANTINE_BUCKET", undefined);
    vi.stubEnv("STREAM_NAME", undefined);
    vi.stubEnv("DEAD_LETTER_QUEUE_URL", "not-a-queue");
    const run = handler({ Records: [] }, lambdaContext({ functionName: "dlq-redrive" }));
    await expect(run).rejects.toMatchObject({ name: "ConfigError" });
    for (const name of ["QUARANTINE_BUCKET", "STREAM_NAME", "DEAD_LETTER_QUEUE_URL"])
      await expect(run).rejects.toThrow(name);
  });

  it.each(["0", "129", "many"])(
    "refuses QUARANTINE_PUT_CONCURRENCY=%s with a ConfigError naming it",
    async (value) => {
      vi.stubEnv("QUARANTINE_BUCKET", "quarantine");
      vi.stubEnv("STREAM_NAME", "events");
      vi.stubEnv("DEAD_LETTER_QUEUE_URL", "https://sqs.eu-west-1.amazonaws.com/123456789012/failures-dlq");
      vi.stubEnv("QUARANTINE_PUT_CONCURRENCY", value);
      const run = handler({ Records: [] }, lambdaContext({ functionName: "dlq-redrive" }));
      await expect(run).rejects.toMatchObject({ name: "ConfigError" });
      await expect(run).rejects.toThrow("QUARANTINE_PUT_CONCURRENCY");
    },
  );
});
