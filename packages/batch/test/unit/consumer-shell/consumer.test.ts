import { processSqsBatch, sqsBatchResponse } from "@mcp-pipeline/batch";
import { TransientError } from "@mcp-pipeline/contracts";
import * as s from "@mcp-pipeline/contracts/light-schema";
import { captureOutput, lambdaContext, sqsRecord } from "@mcp-pipeline/emulators/testing";
import type { Context, SQSRecord } from "aws-lambda";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type Consumer,
  consumerHandler,
  type Sandbox,
  sqsRecords,
} from "../../../src/consumer-shell/index.js";

afterEach(() => vi.unstubAllEnvs());

const configSchema = s.object({
  TARGET_TABLE: s.text({ min: 3 }),
  WIDTH: s.withDefault(s.integer({ coerce: true, min: 1, max: 8 }), 2),
});
type Config = s.Output<typeof configSchema.shape>;

interface Deps {
  readonly config: Config;
  readonly functionName: string;
  readonly handled: string[];
}

/**
 * A consumer whose core is the real batch engine over SQS records: a body "fail" is a transient failure,
 * reported for retry; every other body is handled. It counts how often it is wired.
 */
function consumer(options: {
  manual?: Consumer<Config, Deps, SQSRecord, { messages: number }, Action>["manual"];
}) {
  const wired: Sandbox[] = [];
  const definition: Consumer<Config, Deps, SQSRecord, { messages: number; handled: number }, Action> = {
    service: "test-consumer",
    config: configSchema,
    records: sqsRecords,
    wire: (config, sandbox) => {
      wired.push(sandbox);
      return { config, functionName: sandbox.functionName, handled: [] };
    },
    process: async (records, _context: Context, deps) => {
      const outcome = await processSqsBatch(records, {
        concurrency: deps.config.WIDTH,
        handle: async (record) => {
          if (record.body === "fail")
            throw new TransientError("downstream-5xx", "the downstream answered 503");
          deps.handled.push(record.messageId);
        },
        setAside: async () => {},
      });
      const summary = { messages: records.length, handled: outcome.counts.succeeded };
      return { response: sqsBatchResponse(outcome), summary, outcome };
    },
    report: {
      failure: "message reported for retry",
      summary: "batch done",
      metrics: (summary) => ({ Messages: ["Count", summary.messages], Handled: ["Count", summary.handled] }),
    },
    ...(options.manual ? { manual: options.manual } : {}),
  };
  return { handler: consumerHandler(definition), wired };
}

type Action = { readonly action: "count"; readonly of: string };

const batch = [
  sqsRecord({ messageId: "m-1", body: "ok" }),
  sqsRecord({ messageId: "m-2", body: "fail", receiveCount: 3 }),
];

describe("the consumer shell", () => {
  it("answers the core's partial batch response, logs each failure with its record's identity, and flushes the metrics", async () => {
    vi.stubEnv("TARGET_TABLE", "calls");
    const { handler } = consumer({});
    const { result, lines } = await captureOutput(() => handler({ Records: batch }, lambdaContext()));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: "m-2" }] });
    expect(lines.find((l) => l.message === "message reported for retry")).toMatchObject({
      level: "ERROR",
      service: "test-consumer",
      messageId: "m-2",
      receiveCount: "3",
      code: "downstream-5xx",
      cause: "transient",
      error: "the downstream answered 503",
    });
    // An attribute the logger reserves would be dropped with a warning, and the failure's text with it.
    expect(lines.filter((l) => l.level === "WARN")).toEqual([]);
    expect(lines.find((l) => l.message === "batch done")).toMatchObject({
      messages: 2,
      handled: 1,
      batchItemFailures: [{ itemIdentifier: "m-2" }],
    });
    const emf = lines.find((l) => l._aws !== undefined);
    expect(emf).toMatchObject({ Messages: 2, Handled: 1, service: "test-consumer" });
    expect(emf?._aws).toMatchObject({
      CloudWatchMetrics: [
        {
          Namespace: "McpPipeline",
          Metrics: [
            { Name: "Messages", Unit: "Count" },
            { Name: "Handled", Unit: "Count" },
          ],
        },
      ],
    });
  });

  it("logs a failed record that lacks attributes with what it has, instead of throwing a TypeError after the batch (issue 24)", async () => {
    vi.stubEnv("TARGET_TABLE", "calls");
    const { handler } = consumer({});
    const { attributes: _none, ...noAttributes } = sqsRecord({ messageId: "m-3", body: "fail" });
    const { result, lines } = await captureOutput(() =>
      handler({ Records: [batch[0], noAttributes] }, lambdaContext()),
    );
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: "m-3" }] });
    const logged = lines.find((l) => l.message === "message reported for retry");
    expect(logged).toMatchObject({ messageId: "m-3", code: "downstream-5xx" });
    expect(logged).not.toHaveProperty("receiveCount");
  });

  it("wires the core once per sandbox, with the configuration and the function's name", async () => {
    vi.stubEnv("TARGET_TABLE", "calls");
    vi.stubEnv("WIDTH", "4");
    const { handler, wired } = consumer({});
    const context = lambdaContext({ functionName: "consumer-dev" });
    await captureOutput(() => handler({ Records: batch }, context));
    await captureOutput(() => handler({ Records: [] }, context));
    expect(wired.map((w) => w.functionName)).toEqual(["consumer-dev"]);
  });

  it("fails every invocation with a ConfigError naming each bad setting, and wires once the setting is fixed", async () => {
    vi.stubEnv("TARGET_TABLE", undefined);
    vi.stubEnv("WIDTH", "9");
    const { handler, wired } = consumer({});
    for (const _attempt of [1, 2]) {
      const run = handler({ Records: batch }, lambdaContext());
      await expect(run).rejects.toMatchObject({
        name: "ConfigError",
        problems: expect.arrayContaining([
          expect.stringContaining("TARGET_TABLE"),
          expect.stringContaining("WIDTH"),
        ]),
      });
    }
    expect(wired).toHaveLength(0);
    vi.stubEnv("TARGET_TABLE", "calls");
    vi.stubEnv("WIDTH", "1");
    const { result } = await captureOutput(() => handler({ Records: batch }, lambdaContext()));
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: "m-2" }] });
    expect(wired).toHaveLength(1);
  });

  it.each([
    ["no event", undefined],
    ["null", null],
    ["an event without Records", { records: [] }],
    ["Records that is not an array", { Records: "x" }],
    ["a string", "Records"],
  ])("refuses %s with InvalidEventError, before reading the configuration", async (_label, event) => {
    const { handler } = consumer({});
    await expect(handler(event, lambdaContext())).rejects.toMatchObject({
      name: "InvalidEventError",
      message: "expected an SQS event with a Records array",
    });
  });

  describe("with manual actions", () => {
    const manual = {
      parse: (event: unknown): Action => {
        const of = (event as { count?: unknown } | undefined)?.count;
        if (typeof of !== "string") throw new Error("not an action");
        return { action: "count", of };
      },
      run: async (action: Action, deps: Deps) => ({ table: deps.config.TARGET_TABLE, counted: action.of }),
    };

    it("runs an action that is not a batch, returns its result and logs it", async () => {
      vi.stubEnv("TARGET_TABLE", "calls");
      const { handler } = consumer({ manual });
      const { result, lines } = await captureOutput(() => handler({ count: "quarantine" }, lambdaContext()));
      expect(result).toEqual({ table: "calls", counted: "quarantine" });
      expect(lines.find((l) => l.message === "manual action done")).toMatchObject({
        action: "count",
        result: { table: "calls", counted: "quarantine" },
      });
    });

    it("refuses a payload that is no action before loading the configuration", async () => {
      vi.stubEnv("TARGET_TABLE", undefined);
      const { handler, wired } = consumer({ manual });
      await expect(handler({ delete: "everything" }, lambdaContext())).rejects.toThrow("not an action");
      expect(wired).toHaveLength(0);
    });

    it("still processes batches", async () => {
      vi.stubEnv("TARGET_TABLE", "calls");
      const { handler } = consumer({ manual });
      const { result } = await captureOutput(() => handler({ Records: batch }, lambdaContext()));
      expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: "m-2" }] });
    });
  });
});
