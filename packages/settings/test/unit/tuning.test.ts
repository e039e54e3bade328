// The tuning settings (concurrency, deadline_margin_ms) are typed fields with one declaration of their
// range, default and variable (terraform/modules/pipeline/function-environment.json): the schema takes them
// from there, and a tuning variable in the free-form `environment` map is refused, naming its field.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { environmentSettingsSchema, loadSettings, TUNING, tuningVariables } from "../../src/index.js";

const root = join(import.meta.dirname, "../../../..");
type Json = Record<string, Record<string, unknown>>;
const dev = async () => JSON.parse(JSON.stringify(await loadSettings(root, "dev"))) as Json;
const issues = (json: unknown) => {
  const parsed = environmentSettingsSchema.safeParse(json);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
};

describe("tuning settings", () => {
  it.each(Object.keys(TUNING) as (keyof typeof TUNING)[])(
    "%s: left out, each field is the declared default",
    async (fn) => {
      const json = await dev();
      for (const field of Object.keys(TUNING[fn])) delete json[fn]?.[field];
      const settings = environmentSettingsSchema.parse(json) as unknown as Json;
      for (const [field, t] of Object.entries(TUNING[fn])) expect(settings[fn]?.[field]).toBe(t.default);
    },
  );

  it.each([
    ["processor", "concurrency", 257],
    ["processor", "concurrency", 0],
    ["dlq_redrive", "concurrency", 65],
    ["tool_worker", "deadline_margin_ms", 900_001],
    ["fifo_worker", "deadline_margin_ms", -1],
    ["tool_worker", "concurrency", 2.5],
    ["tool_worker", "retry_backoff_base_ms", 0],
    ["fifo_worker", "retry_backoff_max_ms", 1.5],
    // The ceiling of the workers' backoff is a visibility timeout: never past the queue's own (§2.6).
    ["tool_worker", "retry_backoff_max_ms", 180_001],
    ["fifo_worker", "retry_backoff_base_ms", 30_001],
  ])("%s.%s = %s is refused with its path", async (fn, field, value) => {
    const json = await dev();
    (json[fn] as Record<string, unknown>)[field] = value;
    expect(issues(json)).toEqual([expect.stringMatching(new RegExp(`^${fn}\\.${field}: `))]);
  });

  it("a tuning variable in `environment` is refused, naming its typed field; other variables pass", async () => {
    const json = await dev();
    (json.tool_worker as Record<string, unknown>).environment = { WORKER_CONCURRENCY: "4", MY_TOOL_URL: "x" };
    expect(issues(json)).toEqual([
      "tool_worker.environment.WORKER_CONCURRENCY: WORKER_CONCURRENCY is a typed setting: set concurrency instead",
    ]);
  });

  it("the workers' backoff rules name the field and the limit; the processor has no backoff field", async () => {
    const json = await dev();
    (json.tool_worker as Record<string, unknown>).retry_backoff_max_ms = 200_000;
    (json.fifo_worker as Record<string, unknown>).retry_backoff_base_ms = 130_000;
    expect(issues(json)).toEqual([
      "tool_worker.retry_backoff_max_ms: 200000 ms must be at most queue.visibility_timeout_seconds (180 s = 180000 ms): the backoff shortens the visibility timeout, never lengthens it (§2.6)",
      "fifo_worker.retry_backoff_base_ms: must be at most retry_backoff_max_ms (30000)",
    ]);
    const processor = await dev();
    (processor.processor as Record<string, unknown>).retry_backoff_base_ms = 5000;
    expect(issues(processor)).toEqual([expect.stringMatching(/^processor: /)]);
  });

  it("tuningVariables: the function's variables, as Terraform's pipeline module sets them", () => {
    expect(
      tuningVariables("dlq_redrive", {
        concurrency: 4,
        deadline_margin_ms: 10_000,
        sdk_retry_base_ms: 50,
        sdk_throttle_retry_base_ms: 1000,
      }),
    ).toEqual({
      FAILURE_RECORD_CONCURRENCY: "4",
      DEADLINE_MARGIN_MS: "10000",
      SDK_RETRY_BASE_MS: "50",
      SDK_THROTTLE_RETRY_BASE_MS: "1000",
    });
  });

  it("tuningVariables: a worker's backoff fields are its variables too", () => {
    expect(
      tuningVariables("tool_worker", {
        concurrency: 10,
        deadline_margin_ms: 3000,
        retry_backoff_base_ms: 5000,
        retry_backoff_max_ms: 120_000,
        sdk_retry_base_ms: 5,
        sdk_throttle_retry_base_ms: 100,
      }),
    ).toEqual({
      WORKER_CONCURRENCY: "10",
      DEADLINE_MARGIN_MS: "3000",
      RETRY_BACKOFF_BASE_MS: "5000",
      RETRY_BACKOFF_MAX_MS: "120000",
      SDK_RETRY_BASE_MS: "5",
      SDK_THROTTLE_RETRY_BASE_MS: "100",
    });
  });
});
