import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { type EnvironmentSettings, loadSettings } from "@mcp-pipeline/settings";
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

describe("slow-downstream-exhausts-retries, per configuration (docs/aws-semantics.md §1.4)", () => {
  /** dev (60 s timeout, 5 s margin: 55 s usable an invocation; 3 retries) with the processor's settings changed. */
  async function dev(processor: {
    bisect: boolean;
    latencyMs: number;
    batchSize?: number;
  }): Promise<EnvironmentSettings> {
    const s = await loadSettings(root, "dev");
    return {
      ...s,
      processor: {
        ...s.processor,
        expected_record_latency_ms: processor.latencyMs,
        esm: {
          ...s.processor.esm,
          bisect_batch_on_function_error: processor.bisect,
          batch_size: processor.batchSize ?? s.processor.esm.batch_size,
        },
      },
    };
  }
  const rules = (s: EnvironmentSettings) => settingsFindings(s).map((f) => f.rule);

  it('bisect off ("Bisect off": every partial answer uses a retry, AWS-recorded): 4 invocations x 55 s must cover 10 x 100 records x the latency; 220 ms passes, 221 ms fails', async () => {
    expect(rules(await dev({ bisect: false, latencyMs: 220 }))).toEqual([RuleId.BisectOff]);
    const findings = settingsFindings(await dev({ bisect: false, latencyMs: 221 }));
    expect(findings.map((f) => f.rule)).toEqual([RuleId.BisectOff, RuleId.SlowDownstreamExhaustsRetries]);
    expect(findings[1]?.setting).toBe("processor.esm.maximum_retry_attempts");
    expect(findings[1]?.message).toContain("4 invocations x 55000 ms usable");
  });

  it('bisect on ("Bisect on": a split uses no retry, the documented wording): the settings that fail with bisect off pass; only one slowed record that no invocation can finish fails, naming the timeout', async () => {
    expect(rules(await dev({ bisect: true, latencyMs: 221 }))).toEqual([]);
    // Ten records a batch, so that a full batch still fits in the timeout (batch-exceeds-timeout).
    const findings = settingsFindings(await dev({ bisect: true, latencyMs: 5800, batchSize: 10 }));
    expect(findings.map((f) => f.rule)).toEqual([RuleId.SlowDownstreamExhaustsRetries]);
    expect(findings[0]?.setting).toBe("processor.timeout_seconds");
    expect(findings[0]?.message).toContain("no invocation finishes a record");
  });

  it("bisect on: a slowed record that runs past the deadline still finishes until the processor cuts its requests off (timeout - margin x MARGIN_SHARE.requests), so only a longer one is a finding", async () => {
    // dev: 60 s timeout, 5 s margin. The first record starts with the whole timeout ahead; nothing new starts
    // once less than 5 s remains, but the record in flight runs until its requests are aborted at 2.5 s
    // left (@mcp-pipeline/batch request-deadline.ts). A record of 56 s (> 55 s) finishes there, the deadline
    // answer reports the next one, and the split finishes a record: no retry used.
    expect(rules(await dev({ bisect: true, latencyMs: 5600, batchSize: 10 }))).toEqual([]);
    expect(rules(await dev({ bisect: true, latencyMs: 5750, batchSize: 10 }))).toEqual([]);
    const findings = settingsFindings(await dev({ bisect: true, latencyMs: 5751, batchSize: 10 }));
    expect(findings.map((f) => f.rule)).toEqual([RuleId.SlowDownstreamExhaustsRetries]);
    expect(findings[0]?.message).toContain(
      "57510 ms > 57500 ms before the processor cuts a record's requests off (timeout - margin x 0.5)",
    );
  });

  it("infinite retries: the rule has nothing to count (infinite-retries says what is wrong)", async () => {
    const s = await dev({ bisect: false, latencyMs: 5000, batchSize: 10 });
    const infinite = {
      ...s,
      processor: { ...s.processor, esm: { ...s.processor.esm, maximum_retry_attempts: -1 } },
    };
    expect(rules(infinite)).toEqual([RuleId.BisectOff, RuleId.InfiniteRetries]);
  });
});
