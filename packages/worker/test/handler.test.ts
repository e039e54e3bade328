import { lambdaContext } from "@mcp-pipeline/testing";
import type { SQSEvent } from "aws-lambda";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createWorkerHandler, QueueMode } from "../src/index.js";
import { body, job, WorkerStack } from "./stack.js";

let stack: WorkerStack;
beforeAll(async () => {
  stack = await WorkerStack.start();
  await stack.reset();
});
afterAll(() => stack?.stop());
afterEach(() => {
  vi.unstubAllEnvs();
});

/** Sets the function's environment for one test (undone in afterEach). */
function environment(dlqUrl: string): void {
  for (const [name, value] of Object.entries(stack.functionEnvironment(dlqUrl))) vi.stubEnv(name, value);
}

/** Captures what the handler writes (Powertools logs, warnings on stderr, and EMF metrics) while `run` runs. */
async function captureStdout<T>(
  run: () => Promise<T>,
): Promise<{ result: T; lines: Record<string, unknown>[] }> {
  const lines: string[] = [];
  const record = (chunk: unknown) => {
    lines.push(String(chunk));
    return true;
  };
  const spies = [
    vi.spyOn(process.stdout, "write").mockImplementation(record),
    vi.spyOn(process.stderr, "write").mockImplementation(record),
  ];
  try {
    const result = await run();
    return {
      result,
      lines: lines
        .flatMap((l) => l.split("\n").filter((line) => line.startsWith("{")))
        .map((l) => JSON.parse(l)),
    };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}

describe("worker handlers: thin shells configured only through the environment", () => {
  it.each([
    ["tool-worker", QueueMode.Standard],
    ["fifo-worker", QueueMode.Fifo],
  ] as const)(
    "%s reaches every service through AWS_ENDPOINT_URL_* and emits EMF metrics",
    async (service, mode) => {
      const queue = mode === QueueMode.Fifo ? stack.fifo : stack.standard;
      environment(queue.dlqUrl);
      const handler = createWorkerHandler({ service, mode });
      await stack.send(queue, [
        { ...body(job("text.stats", { text: "one two" })), group: "s1" },
        { body: "not a job", group: "s2" },
      ]);
      const records = await stack.receive(queue);
      const { result, lines } = await captureStdout(() => handler({ Records: records }, lambdaContext()));

      expect(result).toEqual({ batchItemFailures: [] });
      const emf = lines.find((l) => l._aws !== undefined);
      expect(emf).toMatchObject({ Jobs: 2, Succeeded: 1, DeadLettered: 1, Retried: 0, service });
      expect(lines.some((l) => l.message === "poison message sent to the DLQ")).toBe(true);
      expect((await stack.drain(queue.dlqUrl)).map((d) => d.body)).toEqual(["not a job"]);
    },
  );

  it("returns the failed messageIds as the partial batch response (§2.3)", async () => {
    environment(stack.standard.dlqUrl);
    const handler = createWorkerHandler({ service: "tool-worker", mode: QueueMode.Standard });
    await stack.send(stack.standard, [body(job("http.request", { path: "/status/500/x" }))]);
    const records = await stack.receive(stack.standard);
    const { result, lines } = await captureStdout(() => handler({ Records: records }, lambdaContext()));
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: records[0]?.messageId }] });
    expect(lines.find((l) => l.message === "job reported for retry")).toMatchObject({
      messageId: records[0]?.messageId,
      code: "downstream-5xx",
    });
  });

  it("with MAX_RECEIVE_COUNT, records a call whose last allowed attempt failed as dead-lettered, with its DLQ", async () => {
    environment(stack.standard.dlqUrl);
    vi.stubEnv("MAX_RECEIVE_COUNT", "1");
    const handler = createWorkerHandler({ service: "tool-worker", mode: QueueMode.Standard });
    const doomed = job("http.request", { path: "/status/503/last" });
    await stack.send(stack.standard, [body(doomed)]);
    const records = await stack.receive(stack.standard);
    const { result, lines } = await captureStdout(() => handler({ Records: records }, lambdaContext()));
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: records[0]?.messageId }] });
    expect(lines.find((l) => l._aws !== undefined)).toMatchObject({ Retried: 1, LeavingForDlq: 1 });
    expect(await stack.call(doomed.callId)).toMatchObject({
      status: "dead-lettered",
      deadLetter: { queue: stack.standard.dlqUrl, attempt: 1 },
    });
  });

  it.each([
    ["no event", undefined],
    ["an event without Records", { records: [] }],
    ["Records that is not an array", { Records: "x" }],
  ])("refuses %s with InvalidEventError", async (_name, event) => {
    const handler = createWorkerHandler({ service: "tool-worker", mode: QueueMode.Standard });
    await expect(handler(event as unknown as SQSEvent, lambdaContext())).rejects.toMatchObject({
      name: "InvalidEventError",
    });
  });

  it("fails loudly, naming every bad setting, when the environment is incomplete or wrong", async () => {
    const env = {
      TOOL_CALLS_TABLE: "tool-calls",
      DEAD_LETTER_QUEUE_URL: "not-a-url",
      RESULT_INLINE_MAX_BYTES: "500000",
      MAX_RECEIVE_COUNT: "0",
      EVENTS_STREAM_NAME: "bad name!",
      DEDUPE_TABLE: undefined,
      RESULTS_BUCKET: undefined,
    };
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    const handler = createWorkerHandler({ service: "tool-worker", mode: QueueMode.Standard });
    const run = handler({ Records: [] }, lambdaContext());
    await expect(run).rejects.toMatchObject({ name: "ConfigError" });
    for (const name of [
      "DEDUPE_TABLE",
      "RESULTS_BUCKET",
      "DEAD_LETTER_QUEUE_URL",
      "RESULT_INLINE_MAX_BYTES",
      "EVENTS_STREAM_NAME",
      "MAX_RECEIVE_COUNT",
    ]) {
      await expect(run).rejects.toThrow(name);
    }
  });
});
