import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { loadSettings } from "@mcp-pipeline/settings";
import { captureStreams } from "@mcp-pipeline/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { main, RuleId, settingsFindings } from "../src/index.js";

const fixtures = join(import.meta.dirname, "fixtures");
const root = join(import.meta.dirname, "../../..");

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const { result: code, out, err } = await captureStreams(() => main(argv));
  return { code, out, err };
}
afterEach(() => vi.restoreAllMocks());

const reported = (out: string) => [...new Set([...out.matchAll(/^ {2}([a-z-]+) {2}/gm)].map((m) => m[1]))];

describe("lint:config", () => {
  it("passes the shipped environments and the pipeline's wiring", async () => {
    const { code, out } = await run([]);
    expect(out).toContain("dev: ok");
    expect(out).toContain("prod: ok");
    expect(out).toContain("alarms wiring (terraform/modules/pipeline): ok");
    expect(code).toBe(0);
  });

  it("has a failing fixture for every rule", async () => {
    const files = (await readdir(fixtures)).map((f) => f.replace(/\.tfvars\.json$/, ""));
    expect(files.sort()).toEqual(Object.values(RuleId).sort());
  });

  it.each(Object.values(RuleId).filter((r) => r !== RuleId.MissingAlarms))(
    "%s: its fixture fails with exactly that rule",
    async (rule) => {
      const { code, out } = await run(["--file", join(fixtures, `${rule}.tfvars.json`)]);
      expect(code).toBe(1);
      expect(reported(out)).toEqual([rule]);
    },
  );

  it("missing-alarms: a pipeline whose alarms miss a queue's DLQ and a function fails", async () => {
    const { code, out } = await run(["--env", "dev", "--terraform-dir", join(fixtures, "missing-alarms")]);
    expect(code).toBe(1);
    expect(reported(out)).toEqual([RuleId.MissingAlarms]);
    expect(out).toContain("queue queue: its DLQ has no alarms");
    expect(out).not.toContain("queue queue: no alarm on its backlog age");
    expect(out).toContain("function fifo_worker: no Errors, Throttles and Duration alarms");
  });

  it.each([
    [["--nope"], "Unknown option '--nope'"],
    [["--live"], "--live needs --env"],
    [["--env", "nowhere"], "cannot read"],
    [["--file", join(import.meta.dirname, "broken.tf")], "not valid JSON"],
  ])("refuses %j with exit code 2", async (argv, message) => {
    const { code, err } = await run(argv);
    expect(code).toBe(2);
    expect(err).toContain(message);
  });

  it("refuses a settings file that breaks the schema, naming the path", async () => {
    const { code, err } = await run(["--file", join(root, "package.json")]);
    expect(code).toBe(2);
    expect(err).toContain("processor: ");
  });
});

describe("rule boundaries", () => {
  it("a visibility timeout of exactly 6 x timeout + window passes; one second less fails", async () => {
    const s = await loadSettings(root, "dev");
    const exact = 6 * s.tool_worker.timeout_seconds + s.tool_worker.esm.maximum_batching_window_in_seconds;
    const at = (v: number) => ({
      ...s,
      tool_worker: { ...s.tool_worker, queue: { ...s.tool_worker.queue, visibility_timeout_seconds: v } },
    });
    expect(settingsFindings(at(exact))).toEqual([]);
    expect(settingsFindings(at(exact - 1)).map((f) => f.rule)).toEqual([RuleId.VisibilityTimeoutTooShort]);
  });

  it("maximum concurrency equal to reserved concurrency passes; unreserved functions are not compared", async () => {
    const s = await loadSettings(root, "dev");
    const tw = (reserved: number | null, max: number) => ({
      ...s,
      tool_worker: {
        ...s.tool_worker,
        reserved_concurrency: reserved,
        esm: { ...s.tool_worker.esm, maximum_concurrency: max },
      },
    });
    expect(settingsFindings(tw(10, 10))).toEqual([]);
    expect(settingsFindings(tw(null, 500))).toEqual([]);
    expect(settingsFindings(tw(9, 10)).map((f) => f.rule)).toEqual([RuleId.MaxConcurrencyAboveReserved]);
  });

  it("a DLQ age alarm that pages one second before the stream trims passes; one that pages at it fails", async () => {
    const s = await loadSettings(root, "dev");
    const retention = s.stream.retention_period_hours * 3600;
    const alarmAt = (seconds: number) => ({
      ...s,
      alarms: { ...s.alarms, dlq_oldest_message_age_seconds: seconds },
    });
    const limit = retention - s.processor.esm.maximum_record_age_in_seconds;
    expect(settingsFindings(alarmAt(limit - 1))).toEqual([]);
    expect(settingsFindings(alarmAt(limit)).map((f) => f.rule)).toEqual([RuleId.DlqAlarmAfterStreamTrim]);
  });

  it.each([
    ["prod", true, [RuleId.TestToolsInProd]],
    ["prod-eu", true, [RuleId.TestToolsInProd]],
    ["prod", false, []],
    ["dev", true, []],
    ["production", true, []],
    ["preprod", true, []],
  ])("test tools: environment %s with test_tools %s gives %j", async (environment, testTools, rules) => {
    const s = await loadSettings(root, "dev");
    expect(settingsFindings({ ...s, environment, test_tools: testTools }).map((f) => f.rule)).toEqual(rules);
  });
});
