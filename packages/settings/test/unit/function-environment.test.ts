// Each function's environment is declared once (terraform/modules/pipeline/function-environment.json): this
// holds the reader that the local pipeline and tf:check use to what the declaration says, and its errors.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  declaredVariables,
  environmentSettingsSchema,
  FUNCTION_KEYS,
  functionEnvironment,
  loadSettings,
  resourceNames,
  TUNING,
  testTools,
  WIRING_SOURCES,
  wiredEnvironment,
  wiredVariables,
} from "../../src/index.js";

const root = join(import.meta.dirname, "../../../..");
const DLQ = "https://sqs.eu-west-1.amazonaws.com/123456789012/mcp-dev-tool-jobs-dlq";

describe("functionEnvironment: the declared environment of a function", () => {
  it("tool_worker: its tuning settings, its resources, its queue's DLQ and maxReceiveCount, test_tools", async () => {
    const settings = await loadSettings(root, "dev");
    const names = resourceNames(settings.name_prefix, { accountId: "123456789012" });
    expect(functionEnvironment("tool_worker", { settings, names, deadLetterQueueUrl: DLQ })).toEqual({
      DEADLINE_MARGIN_MS: String(settings.tool_worker.deadline_margin_ms),
      WORKER_CONCURRENCY: String(settings.tool_worker.concurrency),
      RETRY_BACKOFF_BASE_MS: String(settings.tool_worker.retry_backoff_base_ms),
      RETRY_BACKOFF_MAX_MS: String(settings.tool_worker.retry_backoff_max_ms),
      SDK_RETRY_BASE_MS: String(settings.tool_worker.sdk_retry_base_ms),
      SDK_THROTTLE_RETRY_BASE_MS: String(settings.tool_worker.sdk_throttle_retry_base_ms),
      TOOL_CALLS_TABLE: "mcp-dev-tool-calls",
      DEDUPE_TABLE: "mcp-dev-dedupe",
      RESULTS_BUCKET: "mcp-dev-results-123456789012",
      EVENTS_STREAM_NAME: "mcp-dev-events",
      DEAD_LETTER_QUEUE_URL: DLQ,
      MAX_RECEIVE_COUNT: String(settings.tool_worker.queue.max_receive_count),
      TEST_TOOLS: settings.test_tools ? "on" : "off",
    });
  });

  it("processor: no queue, no dedupe table; the free-form environment setting is kept", async () => {
    const settings = await loadSettings(root, "dev");
    const own = { ...settings, processor: { ...settings.processor, environment: { MY_TOOL_URL: "x" } } };
    expect(functionEnvironment("processor", { settings: own, names: resourceNames("p") })).toEqual({
      MY_TOOL_URL: "x",
      DEADLINE_MARGIN_MS: String(settings.processor.deadline_margin_ms),
      PROCESSOR_CONCURRENCY: String(settings.processor.concurrency),
      SDK_RETRY_BASE_MS: String(settings.processor.sdk_retry_base_ms),
      SDK_THROTTLE_RETRY_BASE_MS: String(settings.processor.sdk_throttle_retry_base_ms),
      TOOL_CALLS_TABLE: "p-tool-calls",
      QUARANTINE_BUCKET: "p-quarantine",
    });
  });

  it("test_tools false is `off`, true is `on`", async () => {
    const settings = await loadSettings(root, "dev");
    const env = (test_tools: boolean) =>
      functionEnvironment("fifo_worker", {
        settings: { ...settings, test_tools },
        names: resourceNames("p"),
        deadLetterQueueUrl: DLQ,
      }).TEST_TOOLS;
    expect([env(false), env(true)]).toEqual(["off", "on"]);
  });

  it("a consumer without its DLQ's URL is an error naming the function and the source", async () => {
    const settings = await loadSettings(root, "dev");
    expect(() => functionEnvironment("dlq_redrive", { settings, names: resourceNames("p") })).toThrow(
      'function-environment.json: dlq_redrive is wired to "queue.dlq_url", which dlq_redrive has no value for',
    );
  });
});

describe("the declaration itself", () => {
  it.each(FUNCTION_KEYS)("%s: every wired source is one the declaration lists", (fn) => {
    for (const source of Object.values(wiredVariables(fn))) expect(WIRING_SOURCES).toContain(source);
  });

  it.each(FUNCTION_KEYS)("%s: each variable is set once (no tuning variable is wired too)", (fn) => {
    const tuning = Object.values(TUNING[fn]).map((t) => t.variable);
    const wired = Object.keys(wiredVariables(fn));
    expect(declaredVariables(fn).size).toBe(tuning.length + wired.length);
  });

  it.each(FUNCTION_KEYS)("%s: each tuning default is within its range", (fn) => {
    for (const t of Object.values(TUNING[fn])) {
      expect(t.min, t.variable).toBeLessThanOrEqual(t.default);
      expect(t.default, t.variable).toBeLessThanOrEqual(t.max);
    }
  });

  it("tool-worker and fifo-worker read one config (packages/worker): their tuning is the same", () => {
    expect(TUNING.fifo_worker).toEqual(TUNING.tool_worker);
  });

  it("a worker queue's max_receive_count takes the declared range (§2.3)", async () => {
    const json = JSON.parse(JSON.stringify(await loadSettings(root, "dev")));
    for (const [value, ok] of [
      [0, false],
      [1, true],
      [1000, true],
      [1001, false],
    ] as const) {
      json.tool_worker.queue.max_receive_count = value;
      expect(environmentSettingsSchema.safeParse(json).success, String(value)).toBe(ok);
    }
  });

  it("a wired variable in the free-form environment is refused, naming its source", async () => {
    const json = JSON.parse(JSON.stringify(await loadSettings(root, "dev")));
    json.dlq_redrive.environment = { STREAM_NAME: "other" };
    const parsed = environmentSettingsSchema.safeParse(json);
    expect(parsed.error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`)).toEqual([
      "dlq_redrive.environment.STREAM_NAME: STREAM_NAME is set by the pipeline from stream",
    ]);
  });
});

describe("wiredEnvironment: a test stack's own resources, wired as declared", () => {
  it("names each variable as the declaration does; undefined leaves one unset", () => {
    expect(
      wiredEnvironment("dlq_redrive", { quarantine_bucket: "q", stream: "events", "queue.dlq_url": DLQ }),
    ).toEqual({ QUARANTINE_BUCKET: "q", STREAM_NAME: "events", DEAD_LETTER_QUEUE_URL: DLQ });
    expect(
      wiredEnvironment("dlq_redrive", {
        quarantine_bucket: "q",
        stream: "events",
        "queue.dlq_url": undefined,
      }),
    ).toEqual({ QUARANTINE_BUCKET: "q", STREAM_NAME: "events" });
  });

  it("refuses a stack that does not name a source the function is wired to", () => {
    expect(() => wiredEnvironment("processor", { tool_calls_table: "t" })).toThrow(
      "function-environment.json: processor is wired to quarantine_bucket, which the stack does not give",
    );
  });
});

describe("testTools: the test_tools setting as the functions see it", () => {
  it("reaches the two workers, as TEST_TOOLS, on or off", () => {
    expect(testTools.functions).toEqual(["tool_worker", "fifo_worker"]);
    expect(testTools.functions.map((fn) => testTools.variable(fn))).toEqual(["TEST_TOOLS", "TEST_TOOLS"]);
    expect(testTools.variable("processor")).toBeUndefined();
    expect([testTools.value(true), testTools.value(false)]).toEqual(["on", "off"]);
  });

  it("reads a deployed value: only the declared on is on", () => {
    expect(["on", "off", undefined, "ON", "true"].map((v) => testTools.isOn(v))).toEqual([
      true,
      false,
      false,
      false,
      false,
    ]);
  });
});
