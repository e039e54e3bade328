import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { captureStreams } from "@mcp-pipeline/emulators/testing";
import { type EnvironmentSettings, loadSettings, settingsFile } from "@mcp-pipeline/settings";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  LiveReadProblem,
  liveReadError,
  main,
  RuleId,
  settingsFindings,
} from "../../../src/config-lint/index.js";

const fixtures = join(import.meta.dirname, "../../fixtures/config-lint");
const root = join(import.meta.dirname, "../../../../..");

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
    [["--file", join(import.meta.dirname, "../../fixtures/broken.tf")], "not valid JSON"],
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

/**
 * Issue 26 item 14: what `npm run lint:config` says, driven as an operator runs it (its entry in a child
 * process, as `npm run lint:config -- ...` starts it), for the settings a person gets wrong most.
 */
describe("lint:config's messages, from the command line", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "lint-config-messages-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const cli = (argv: readonly string[], env: NodeJS.ProcessEnv = process.env) => {
    const result = spawnSync(
      process.execPath,
      ["--import", "tsx", join(root, "tools/terraform/bin/lint-config.ts"), ...argv],
      { cwd: root, encoding: "utf8", env, timeout: 120_000 },
    );
    return { code: result.status, out: result.stdout, err: result.stderr };
  };

  /** dev's settings with each dotted path set to its value (undefined: removed), written as a file of its own. */
  async function devWith(name: string, changes: Readonly<Record<string, unknown>>): Promise<string> {
    const settings = JSON.parse(await readFile(settingsFile(root, "dev"), "utf8")) as Record<string, unknown>;
    for (const [path, value] of Object.entries(changes)) {
      const keys = path.split(".");
      const last = keys.pop() as string;
      const parent = keys.reduce((node, key) => node[key] as Record<string, unknown>, settings);
      if (value === undefined) delete parent[last];
      else parent[last] = value;
    }
    const file = join(dir, `${name}.tfvars.json`);
    await writeFile(file, JSON.stringify(settings));
    return file;
  }

  it("a visibility timeout below the function's timeout names that rule, not the backoff default the file lacks", async () => {
    const file = await devWith("visibility", { "tool_worker.queue.visibility_timeout_seconds": 10 });
    const { code, out, err } = cli(["--file", file]);
    expect({ code, err }).toEqual({ code: 1, err: "" });
    expect(reported(out)).toEqual([RuleId.VisibilityTimeoutTooShort]);
    expect(out).toContain("tool_worker.queue.visibility_timeout_seconds");
    expect(out).toContain(
      "visibility timeout 10 s is below the function's timeout 30 s: Lambda refuses to create the mapping (§2.1)",
    );
    expect(out).not.toContain("retry_backoff_max_ms");
  }, 120_000);

  it("a backoff ceiling above the visibility timeout says when the file does not set it (its default)", async () => {
    const file = await devWith("backoff-default", {
      "tool_worker.timeout_seconds": 10,
      "tool_worker.queue.visibility_timeout_seconds": 20,
    });
    const { code, out, err } = cli(["--file", file]);
    expect({ code, out }).toEqual({ code: 2, out: "" });
    expect(err).toContain(
      "tool_worker.retry_backoff_max_ms: 30000 ms must be at most queue.visibility_timeout_seconds (20 s = 20000 ms)",
    );
    expect(err).toContain("(the file does not set tool_worker.retry_backoff_max_ms: that is its default)");
    const set = await devWith("backoff-set", {
      "tool_worker.timeout_seconds": 10,
      "tool_worker.queue.visibility_timeout_seconds": 20,
      "tool_worker.retry_backoff_max_ms": 25_000,
    });
    const explicit = cli(["--file", set]);
    expect(explicit.code).toBe(2);
    expect(explicit.err).toContain("tool_worker.retry_backoff_max_ms: 25000 ms must be at most");
    expect(explicit.err).not.toContain("that is its default");
  }, 120_000);

  it("a missing maximum_concurrency says null is allowed and the range", async () => {
    const file = await devWith("no-maximum-concurrency", {
      "fifo_worker.esm.maximum_concurrency": undefined,
    });
    const { code, out, err } = cli(["--file", file]);
    expect({ code, out }).toEqual({ code: 2, out: "" });
    expect(err).toContain(
      "fifo_worker.esm.maximum_concurrency: missing: set a whole number from 2 to 1000 (ScalingConfig.MaximumConcurrency, §2.2), or null for no limit",
    );
    expect(err).not.toContain("expected number, received undefined");
    const one = cli([
      "--file",
      await devWith("maximum-concurrency-1", { "fifo_worker.esm.maximum_concurrency": 1 }),
    ]);
    expect(one.code).toBe(2);
    expect(one.err).toContain("fifo_worker.esm.maximum_concurrency: must be a whole number from 2 to 1000");
  }, 120_000);

  it("an unbounded mapping (null) with reserved concurrency is flagged like a maximum above it", async () => {
    const file = await devWith("unbounded", { "tool_worker.esm.maximum_concurrency": null });
    const { code, out } = cli(["--file", file]);
    expect(code).toBe(1);
    expect(reported(out)).toEqual([RuleId.MaxConcurrencyAboveReserved]);
    expect(out).toContain("tool_worker.esm.maximum_concurrency");
    expect(out).toContain(
      "no maximum concurrency (null: the mapping scales up to about 1000 concurrent batches) exceeds reserved concurrency 20",
    );
    // Unreserved and unbounded: nothing to exceed.
    const free = cli([
      "--file",
      await devWith("unbounded-unreserved", {
        "tool_worker.esm.maximum_concurrency": null,
        "tool_worker.reserved_concurrency": null,
      }),
    ]);
    expect(free.code).toBe(0);
  }, 120_000);

  /** The environment of a machine with no AWS credentials: none in variables, files or metadata. */
  const withoutCredentials = () => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of Object.keys(env))
      if (
        /^AWS_(ACCESS_KEY|SECRET|SESSION|PROFILE|DEFAULT_PROFILE|ENDPOINT_URL|WEB_IDENTITY|ROLE|CONTAINER)/.test(
          name,
        )
      )
        delete env[name];
    return {
      ...env,
      AWS_CONFIG_FILE: join(dir, "no-config"),
      AWS_SHARED_CREDENTIALS_FILE: join(dir, "no-credentials"),
      AWS_EC2_METADATA_DISABLED: "true",
    };
  };

  it("--live without credentials prints one line that says what to set, never a stack trace", () => {
    const { code, out, err } = cli(["--env", "dev", "--live"], withoutCredentials());
    expect({ code, out }).toEqual({ code: 2, out: "" });
    expect(err.trim().split("\n")).toEqual([
      "dev (live): --live reads the deployed environment through the AWS APIs and found no credentials: set AWS_PROFILE (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, with AWS_SESSION_TOKEN for temporary ones) for the account it runs in, then run the command again",
    ]);
    expect(err).not.toMatch(/\n\s+at /);
  }, 120_000);

  it("--live against endpoints that do not answer says so in one line", () => {
    const { code, out, err } = cli(["--env", "dev", "--live"], {
      ...withoutCredentials(),
      AWS_ACCESS_KEY_ID: "x",
      AWS_SECRET_ACCESS_KEY: "x",
      // Nothing listens on port 9: the request is refused at once.
      AWS_ENDPOINT_URL: "http://127.0.0.1:9",
      AWS_MAX_ATTEMPTS: "1",
    });
    expect({ code, out }).toEqual({ code: 2, out: "" });
    expect(err.trim().split("\n")).toHaveLength(1);
    expect(err).toContain("dev (live): --live: AWS did not answer in eu-west-1 (ECONNREFUSED");
  }, 120_000);

  it("rejected or insufficient credentials are named with what to do (the SDK's error names)", () => {
    const named = (name: string) => Object.assign(new Error(`${name} happened`), { name });
    expect(liveReadError(named("ExpiredTokenException"), "eu-west-1")?.problem).toBe(
      LiveReadProblem.RejectedCredentials,
    );
    expect(liveReadError(named("AccessDeniedException"), "eu-west-1")?.message).toContain(
      "may not read the environment's configuration",
    );
    expect(liveReadError(named("ResourceNotFoundException"), "eu-west-1")).toBeUndefined();
  });
});

describe("docs/deploy.md's table of the rules", () => {
  it("names every rule lint:config has, and no other", async () => {
    const text = await readFile(join(root, "docs", "deploy.md"), "utf8");
    const start = text.indexOf("| Rule", text.indexOf("`npm run lint:config` refuses"));
    const table = text.slice(start, text.indexOf("\n\n", start));
    const rows = [...table.matchAll(/^\| `([a-z-]+)` +\|/gm)].map((m) => m[1]);
    expect(rows.sort()).toEqual(Object.values(RuleId).sort());
  });
});
