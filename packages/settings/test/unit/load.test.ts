import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSettings, SettingsError, settingsFile } from "../../src/index.js";

const root = join(import.meta.dirname, "../../../..");

describe("the shipped environments", () => {
  it.each(["dev", "prod"])("%s parses and keeps the pipeline's safety settings on", async (env) => {
    const settings = await loadSettings(root, env);
    expect(settings.environment).toBe(env);
    expect(settings.processor.esm).toMatchObject({
      bisect_batch_on_function_error: true,
      report_batch_item_failures: true,
    });
    expect(settings.processor.esm.maximum_retry_attempts).toBeGreaterThanOrEqual(0);
  });
});

describe("loadSettings refuses bad files with the path of every problem", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "settings-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function write(env: string, content: string): Promise<void> {
    await mkdir(join(dir, "terraform", "environments", env), { recursive: true });
    await writeFile(settingsFile(dir, env), content);
  }
  type Json = { [key: string]: Json } & Record<string, unknown>;
  const base = async () => JSON.parse(JSON.stringify(await loadSettings(root, "dev"))) as Json;

  it("a missing file", async () => {
    await expect(loadSettings(dir, "qa")).rejects.toThrow(/cannot read/);
  });

  it("a name that is not an environment (no path tricks)", async () => {
    await expect(loadSettings(dir, "../dev")).rejects.toBeInstanceOf(SettingsError);
  });

  it("a file that is not JSON", async () => {
    await write("qa", "{ environment: qa");
    await expect(loadSettings(dir, "qa")).rejects.toThrow(/not JSON/);
  });

  it("a file of another environment", async () => {
    await write("qa", JSON.stringify(await base()));
    await expect(loadSettings(dir, "qa")).rejects.toThrow(/environment is "dev"/);
  });

  it.each([
    ["processor.esm.parallelization_factor", 11, "processor.esm.parallelization_factor"],
    ["processor.esm.maximum_record_age_in_seconds", 30, "must be -1 or 60..604800"],
    ["processor.esm.batch_size", 0, "processor.esm.batch_size"],
    ["processor.esm.starting_position", "AT_NOON", "processor.esm.starting_position"],
    ["tool_worker.esm.maximum_concurrency", 1, "tool_worker.esm.maximum_concurrency"],
    ["tool_worker.esm.batch_size", 100, "needs maximum_batching_window_in_seconds >= 1"],
    ["tool_worker.timeout_seconds", 901, "tool_worker.timeout_seconds"],
    ["stream.retention_period_hours", 12, "stream.retention_period_hours"],
    ["processor.log_retention_days", 10, "processor.log_retention_days"],
    ["processor.esm.bisect_on_error", true, "Unrecognized key"],
  ])("%s = %j", async (path, value, message) => {
    const settings = await base();
    const keys = path.split(".");
    let target: Json = settings;
    for (const key of keys.slice(0, -1)) target = target[key] as Json;
    (target as Record<string, unknown>)[keys.at(-1) as string] = value;
    await write("dev", JSON.stringify(settings));
    const error = await loadSettings(dir, "dev").catch((e) => e);
    expect(error).toBeInstanceOf(SettingsError);
    expect(error.message).toContain(message);
  });
});
