// The tuning settings (concurrency, deadline_margin_ms) are typed fields with one declaration of their
// range, default and variable (src/tuning.ts): the schema takes them from there, and a tuning variable
// in the free-form `environment` map is refused, naming the field to use instead.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { environmentSettingsSchema, loadSettings, TUNING, tuningVariables } from "../src/index.js";

const root = join(import.meta.dirname, "../../..");
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
      delete json[fn]?.concurrency;
      delete json[fn]?.deadline_margin_ms;
      const settings = environmentSettingsSchema.parse(json);
      expect(settings[fn].concurrency).toBe(TUNING[fn].concurrency.default);
      expect(settings[fn].deadline_margin_ms).toBe(TUNING[fn].deadline_margin_ms.default);
    },
  );

  it.each([
    ["processor", "concurrency", 257],
    ["processor", "concurrency", 0],
    ["dlq_redrive", "concurrency", 65],
    ["tool_worker", "deadline_margin_ms", 900_001],
    ["fifo_worker", "deadline_margin_ms", -1],
    ["tool_worker", "concurrency", 2.5],
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

  it("tuningVariables: the function's variables, as Terraform's pipeline module sets them", () => {
    expect(tuningVariables("dlq_redrive", { concurrency: 4, deadline_margin_ms: 10_000 })).toEqual({
      FAILURE_RECORD_CONCURRENCY: "4",
      DEADLINE_MARGIN_MS: "10000",
    });
  });
});
