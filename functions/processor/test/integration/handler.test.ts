import { captureOutput, lambdaContext } from "@mcp-pipeline/emulators/testing";
import type { KinesisStreamEvent } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Stack, startedRecords } from "../stack.js";

let stack: Stack;
beforeAll(async () => {
  stack = await Stack.start();
  await stack.reset();
});
afterAll(() => stack.stop());

async function freshHandler(env: Record<string, string>) {
  vi.resetModules();
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  return (await import("../../src/handler.js")).handler;
}

const functionEnvironment = () => stack.functionEnvironment();

describe("processor handler: a thin shell configured only through the environment", () => {
  it("reaches emulators through AWS_ENDPOINT_URL_* and emits EMF metrics", async () => {
    const handler = await freshHandler(functionEnvironment());
    const lines: string[] = [];
    const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    const { records } = startedRecords(5, 2);
    const response = await handler({ Records: records }, lambdaContext({ timeoutMs: 30_000 }));
    spy.mockRestore();
    vi.unstubAllEnvs();

    expect(response).toEqual({ batchItemFailures: [] });
    expect((await stack.calls()).size).toBe(5);
    const emf = lines.map((l) => JSON.parse(l)).find((l) => l._aws?.CloudWatchMetrics);
    expect(emf).toMatchObject({ Applied: 5, Records: 5, Quarantined: 0, Failed: 0, service: "processor" });
  });

  it("quarantines a record that can never succeed through the S3 client loaded on first use, and names the function", async () => {
    const handler = await freshHandler(functionEnvironment());
    const [record] = startedRecords(1, 1).records;
    const bad = { ...record, kinesis: { ...record?.kinesis, data: Buffer.from("{oops").toString("base64") } };
    const { result, lines } = await captureOutput(() =>
      handler({ Records: [bad] }, lambdaContext({ timeoutMs: 30_000, functionName: "processor-dev" })),
    );
    vi.unstubAllEnvs();

    expect(result).toEqual({ batchItemFailures: [] });
    const quarantined = lines.find((l) => l.message === "record quarantined");
    expect(quarantined).toMatchObject({ sequenceNumber: record?.kinesis.sequenceNumber });
    expect(lines.find((l) => l._aws !== undefined)).toMatchObject({ Records: 1, Quarantined: 1, Failed: 0 });
    expect(await stack.quarantined()).toEqual([
      expect.objectContaining({ quarantinedBy: "processor-dev", data: bad.kinesis.data }),
    ]);
  });

  it.each([
    ["no event", undefined],
    ["an event without Records", { records: [] }],
    ["Records that is not an array", { Records: "x" }],
  ])("refuses %s with InvalidEventError", async (_name, event) => {
    const handler = await freshHandler({});
    await expect(handler(event as unknown as KinesisStreamEvent, lambdaContext())).rejects.toMatchObject({
      name: "InvalidEventError",
    });
    vi.unstubAllEnvs();
  });

  it("fails loudly, naming every bad setting, when the environment is incomplete", async () => {
    const handler = await freshHandler({ PROCESSOR_CONCURRENCY: "0" });
    vi.stubEnv("TOOL_CALLS_TABLE", undefined);
    vi.stubEnv("QUARANTINE_BUCKET", undefined);
    const run = handler({ Records: [] }, lambdaContext());
    await expect(run).rejects.toMatchObject({ name: "ConfigError" });
    await expect(run).rejects.toThrow(
      /TOOL_CALLS_TABLE[\s\S]*QUARANTINE_BUCKET|QUARANTINE_BUCKET[\s\S]*TOOL_CALLS_TABLE/,
    );
    await expect(run).rejects.toThrow(/PROCESSOR_CONCURRENCY/);
    vi.unstubAllEnvs();
  });
});
