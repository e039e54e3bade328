import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { DynamoDBClient, GetItemCommand, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { KinesisClient, PutRecordsCommand } from "@aws-sdk/client-kinesis";
import { UsageError } from "@mcp-pipeline/cli";
import { CURRENT_SPEC_VERSION, encodeLifecycleEvent } from "@mcp-pipeline/contracts";
import { startDynamoDb, startKinesis, startSqsS3 } from "@mcp-pipeline/emulators";
import { bundleAll } from "@mcp-pipeline/emulators/testing";
import { loadSettings, settingsFile } from "@mcp-pipeline/settings";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCli } from "../../src/pipeline/cli.js";
import { buildScenario } from "../../src/pipeline/scenario.js";
import { launchChromium } from "../chromium.ts";

const root = join(import.meta.dirname, "../../../..");
let dist: string;
/** The report and summary of the first run, looked at in chromium by the report test. */
let reportFile: string | undefined;
let reportSummary: { lost: number; functions: Record<string, { invocations: number }> } | undefined;
/** The child processes' temporary directory: other test files create their own mcp-local-* in parallel. */
let childTmp: string;

beforeAll(async () => {
  dist = await bundleAll();
  childTmp = await mkdtemp(join(tmpdir(), "npm-start-test-"));
}, 300_000);
afterAll(async () => {
  await rm(dist, { recursive: true, force: true });
  await rm(childTmp, { recursive: true, force: true });
});

/** `npm start` without the build step: the same entry point on the test runtime's Node 22. */
function start(args: string[]): ChildProcess {
  return spawn(
    process.execPath,
    // As package.json's start script runs it: the SQS emulator's SQLite warning is not the user's business.
    [
      "--disable-warning=ExperimentalWarning",
      "--import",
      "tsx",
      join(root, "local/runtime/bin/start.ts"),
      "--dist",
      dist,
      ...args,
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        TMPDIR: childTmp,
        AWS_ENDPOINT_URL: "",
        AWS_ENDPOINT_URL_KINESIS: "",
        AWS_ENDPOINT_URL_SQS: "",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
}

function collect(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (c) => {
    stdout += c;
  });
  child.stderr?.on("data", (c) => {
    stderr += c;
  });
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, stdout, stderr })));
}

const leftovers = async () => (await readdir(childTmp)).filter((d) => d.startsWith("mcp-local-"));

describe("the main job (npm start)", () => {
  it("runs a small scenario end to end and accounts for every input: lost = 0", async () => {
    const before = await leftovers();
    const options = ["--events", "150", "--jobs", "40", "--fifo-jobs", "20", "--sessions", "6"];
    const faults = [
      ...["--poison-rate", "0.05", "--transient-rate", "0.1", "--stuck-rate", "0.03"],
      // The run ends as soon as everything is accounted for: the deadline only matters on a loaded machine.
      ...["--seed", "7", "--timeout", "1000"],
    ];
    const report = join(childTmp, "report.html");
    const { code, stdout, stderr } = await collect(
      start([...options, ...faults, "--json", "--report", report]),
    );
    // --json: stdout is the summary and nothing else. The report is written whatever the verdict.
    const summary = JSON.parse(stdout);
    reportFile = report;
    reportSummary = summary;
    expect(code, stderr).toBe(0);
    const scenario = buildScenario({
      events: 150,
      jobs: 40,
      fifoJobs: 20,
      sessions: 6,
      poisonRate: 0.05,
      transientRate: 0.1,
      duplicateRate: 0.02,
      stuckRate: 0.03,
      seed: 7,
    });
    const poisonRecords = scenario.stream.filter((s) => s.kind === "poison").length;
    const poisonJobs = [...scenario.jobs, ...scenario.fifoJobs].filter((j) => j.kind === "poison").length;
    expect(summary).toMatchObject({
      lost: 0,
      eventsIn: scenario.stream.length,
      jobsIn: 60,
      environment: "dev",
      // dev runs bisect on; npm start uses the local ESM's default accounting (§1.4).
      partialSplits: "split-free",
    });
    // At least once: a poison record redelivered after a later retry is quarantined again (same object).
    // On a loaded machine a batch whose invocations all timed out reaches the quarantine the other way,
    // through the failure queue and dlq-redrive (quarantinedByDlqRedrive), without the processor's metric.
    expect(summary.quarantined + summary.quarantinedByDlqRedrive).toBeGreaterThanOrEqual(poisonRecords);
    expect(summary.sentToDlq).toBeGreaterThanOrEqual(poisonJobs);
    expect(summary.retried).toBeGreaterThan(0);
    // Stuck events exhausted their retries, reached the failure queue, were stored by dlq-redrive and,
    // once the fault stopped, replayed and applied.
    expect(scenario.stream.filter((s) => s.kind === "stuck").length).toBeGreaterThan(0);
    expect(summary.toFailureDestination).toBeGreaterThan(0);
    expect(summary.quarantinedByDlqRedrive).toBeGreaterThanOrEqual(summary.toFailureDestination);
    expect(summary.replayed).toBeGreaterThan(0);
    // An invocation that timed out after its write (a loaded machine) is retried, and the retry finds
    // the event applied already: it counts as a duplicate then, not as applied a second time.
    expect(summary.applied + summary.duplicatesSkipped).toBeGreaterThanOrEqual(
      scenario.stream.filter((s) => s.kind === "event" || s.kind === "stuck").length,
    );
    expect(summary.latencyMs.p99).toBeGreaterThanOrEqual(summary.latencyMs.p50);
    // The processor's DynamoDB requests, counted at its proxy in front of the emulator: every record of the
    // scenario reached it at least once, it wrote, and the stuck events' writes were refused, not counted.
    expect(summary.processorDynamoDb.firstDeliveries).toBeGreaterThanOrEqual(scenario.stream.length);
    expect(summary.processorDynamoDb.byOperation.PutItem).toBeGreaterThan(0);
    expect(summary.processorDynamoDb.refusedByFault).toBeGreaterThan(0);
    expect(stderr).toContain("accounted");
    expect(stderr).toContain(`report: ${report}`);
    // The noise a person should not see (issue 14, item 12): parseArgs, SQLite and SDK warnings as such.
    expect(stderr).not.toMatch(/ExperimentalWarning|\[WARN\] a request has exceeded/);
    // Nothing left behind: the copies of the function code are removed on exit.
    expect(await leftovers()).toEqual(before);
  }, 1_200_000);

  it("writes an HTML report that renders in headless chromium with data in every chart", async () => {
    if (!reportFile || !reportSummary) throw new Error("the end-to-end run above did not write its report");
    const { context, close } = await launchChromium();
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      // Offline: a request to anything but the file itself would be a dependency the report must not have.
      const requests: string[] = [];
      page.on("request", (r) => requests.push(r.url()));
      await page.goto(`file://${reportFile}`);
      expect(errors).toEqual([]);
      expect(requests).toEqual([`file://${reportFile}`]);
      expect(await page.textContent("#verdict")).toContain(`lost ${reportSummary.lost}`);
      // Each chart: its series' colours are drawn on its canvas (pixels read back), not just a canvas.
      const charts = await page.$$eval(".chart", (elements) =>
        elements.map((el) => {
          const canvas = el.querySelector("canvas") as HTMLCanvasElement;
          const pixels = (canvas.getContext("2d") as CanvasRenderingContext2D).getImageData(
            0,
            0,
            canvas.width,
            canvas.height,
          ).data;
          const colours = (el.getAttribute("data-colors") ?? "").split(",").filter(Boolean);
          const drawn = colours.map((hex) => {
            const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
            let n = 0;
            for (let i = 0; i < pixels.length; i += 4)
              if (
                Math.abs((pixels[i] as number) - (r as number)) < 8 &&
                Math.abs((pixels[i + 1] as number) - (g as number)) < 8 &&
                Math.abs((pixels[i + 2] as number) - (b as number)) < 8 &&
                (pixels[i + 3] as number) > 200
              )
                n++;
            return n;
          });
          return { id: el.id, series: colours.length, drawn };
        }),
      );
      expect(charts.map((c) => c.id)).toEqual([
        "chart-throughput",
        "chart-iterator-age",
        "chart-outcomes",
        "chart-invocations",
      ]);
      for (const chart of charts) {
        expect(chart.series, chart.id).toBeGreaterThan(0);
        // At least one series of every chart is drawn with pixels of its colour.
        expect(Math.max(...chart.drawn), chart.id).toBeGreaterThan(20);
      }
      const rows = await page.$$eval("#functions tbody tr", (trs) =>
        trs.map((tr) => Array.from(tr.querySelectorAll("td"), (td) => td.textContent ?? "")),
      );
      expect(Object.fromEntries(rows.map((r) => [r[0], Number(r[1])]))).toEqual(
        Object.fromEntries(Object.entries(reportSummary.functions).map(([n, f]) => [n, f.invocations])),
      );
      // Kept for a person to look at: .tmp/ in the repository (ignored by git).
      await mkdir(join(root, ".tmp"), { recursive: true });
      await page.screenshot({ path: join(root, ".tmp/npm-start-report.png"), fullPage: true });
    } finally {
      await close();
    }
  }, 180_000);

  it("--serve keeps the stack up: records put with a plain AWS SDK client are applied to the table", async () => {
    const before = await leftovers();
    const child = start(["--serve"]);
    const done = collect(child);
    const env: Record<string, string> = {};
    const lines: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the stack did not print # ready")), 240_000);
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
        lines.push(line);
        if (line === "# ready") {
          clearTimeout(timer);
          resolve();
        }
        const match = /^([A-Z0-9_]+)=(.*)$/.exec(line);
        if (match) env[match[1] as string] = match[2] as string;
      });
    });
    expect(env.AWS_ENDPOINT_URL_KINESIS).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // Issue 14, items 5 and 6: the environment's region for the SDKs and the AWS CLI v1, and a file a
    // shell can load without an error (every line NAME=value or a comment).
    const settings = await loadSettings(root, "dev");
    expect(env.AWS_REGION).toBe(settings.region);
    expect(env.AWS_DEFAULT_REGION).toBe(settings.region);
    expect(lines.every((line) => /^[A-Z0-9_]+=\S+$/.test(line) || line.startsWith("# "))).toBe(true);
    const file = join(childTmp, "stack.env");
    await writeFile(file, `${lines.join("\n")}\n`);
    const sourced = spawnSync(
      "bash",
      ["-c", 'set -euo pipefail; set -a; . "$1"; set +a; echo "$AWS_DEFAULT_REGION $STREAM_NAME"', "-", file],
      { encoding: "utf8" },
    );
    expect(sourced.stderr).toBe("");
    expect(sourced.stdout.trim()).toBe(`${settings.region} ${env.STREAM_NAME}`);
    const credentials = {
      accessKeyId: env.AWS_ACCESS_KEY_ID ?? "",
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? "",
    };
    const region = env.AWS_REGION ?? "";
    const kinesis = new KinesisClient({
      region,
      credentials,
      endpoint: String(env.AWS_ENDPOINT_URL_KINESIS),
      requestHandler: new NodeHttpHandler(),
    });
    const dynamodb = new DynamoDBClient({
      region,
      credentials,
      endpoint: String(env.AWS_ENDPOINT_URL_DYNAMODB),
    });
    const callIds = ["served-1", "served-2", "served-3"];
    await kinesis.send(
      new PutRecordsCommand({
        StreamName: env.STREAM_NAME,
        Records: callIds.map((callId, i) => ({
          PartitionKey: "session-served",
          Data: new TextEncoder().encode(
            encodeLifecycleEvent({
              specVersion: CURRENT_SPEC_VERSION,
              type: "tool_call.requested",
              eventId: `served-event-${i}`,
              callId,
              sessionId: "session-served",
              tool: "text.stats",
              occurredAt: new Date().toISOString(),
              argumentsDigest: "0".repeat(64),
            }),
          ),
        })),
      }),
    );
    const until = Date.now() + 120_000;
    const found = new Set<string>();
    while (found.size < callIds.length && Date.now() < until) {
      for (const callId of callIds) {
        const { Item } = await dynamodb.send(
          new GetItemCommand({
            TableName: env.TOOL_CALLS_TABLE,
            Key: { callId: { S: callId } },
            ConsistentRead: true,
          }),
        );
        if (Item?.status?.S === "requested") found.add(callId);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    expect([...found].sort()).toEqual(callIds);
    child.kill("SIGINT");
    const { code } = await done;
    expect(code).toBe(0);
    expect(await leftovers()).toEqual(before);
    kinesis.destroy();
    dynamodb.destroy();
  }, 300_000);

  it("uses the endpoints given as AWS_ENDPOINT_URL_* instead of starting emulators", async () => {
    const [dynamodb, kinesis, sqsS3] = await Promise.all([startDynamoDb(), startKinesis(), startSqsS3()]);
    try {
      const child = spawn(
        process.execPath,
        [
          "--import",
          "tsx",
          join(root, "local/runtime/bin/start.ts"),
          "--dist",
          dist,
          "--events",
          "30",
          "--jobs",
          "5",
          // Ends when everything is accounted for; the deadline only matters on a loaded machine.
          "--timeout",
          "1000",
        ],
        {
          cwd: root,
          env: {
            ...process.env,
            AWS_ENDPOINT_URL_DYNAMODB: dynamodb.endpoint,
            AWS_ENDPOINT_URL_KINESIS: kinesis.endpoint,
            AWS_ENDPOINT_URL_SQS: sqsS3.endpoint,
            AWS_ENDPOINT_URL_S3: sqsS3.endpoint,
          },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      const { code, stderr, stdout } = await collect(child);
      expect(code, stderr).toBe(0);
      expect(stderr).toContain("using AWS_ENDPOINT_URL_* endpoints");
      expect(stdout).toMatch(/lost\s+0/);
      // The resources were created in the given emulators.
      const tables = await new DynamoDBClient({
        region: "us-east-1",
        endpoint: dynamodb.endpoint,
        credentials: { accessKeyId: "x", secretAccessKey: "x" },
      }).send(new ListTablesCommand({}));
      expect(tables.TableNames).toContain("mcp-dev-tool-calls");
    } finally {
      await Promise.all([dynamodb.stop(), kinesis.stop(), sqsS3.stop()]);
    }
  }, 1_200_000);

  it("refuses an unknown environment with exit code 2, the file it looked for and the environments that exist", async () => {
    const { code, stderr } = await collect(start(["--env", "nowhere"]));
    expect(code).toBe(2);
    expect(stderr).toContain("terraform/environments/nowhere/terraform.tfvars.json");
    expect(stderr).not.toContain("ENOENT");
    const existing = (await readdir(join(root, "terraform/environments"), { withFileTypes: true }))
      .filter((d) => d.isDirectory() && existsSync(settingsFile(root, d.name)))
      .map((d) => d.name)
      .sort();
    expect(existing).toContain("dev");
    expect(stderr).toContain(`environments: ${existing.join(", ")}`);
  }, 120_000);
});

describe("npm start's command line", () => {
  it("reads `npm start --json` (npm keeps the flag and passes it on as npm_config_json)", () => {
    expect(parseCli([], { npm_config_json: "true" }).json).toBe(true);
    expect(parseCli(["--no-report"]).report).toBeUndefined();
    expect(parseCli(["--report", "r.html"]).report).toBe("r.html");
  });

  it("has defaults for everything", () => {
    expect(parseCli([])).toMatchObject({
      env: "dev",
      timeScale: 10,
      json: false,
      report: ".tmp/npm-start-report.html",
      serve: false,
      scenario: { events: 2000, jobs: 300, fifoJobs: 100, sessions: 20, seed: 42 },
      partialSplitAccounting: "split-free",
    });
  });

  it("--serve --drill takes --seed and --timeout (the drill's ids and its bound)", () => {
    const options = parseCli(["--serve", "--drill", "--seed", "7", "--timeout", "60"]);
    expect(options.scenario.seed).toBe(7);
    expect(options.timeoutMs).toBe(60_000);
  });

  it("--partial-split-accounting chooses how a bisect-on partial split is counted (§1.4: AWS does not say)", () => {
    expect(parseCli(["--partial-split-accounting", "counts-attempt"]).partialSplitAccounting).toBe(
      "counts-attempt",
    );
    expect(parseCli(["--partial-split-accounting", "split-free"]).partialSplitAccounting).toBe("split-free");
  });

  it.each([
    [["--events=-5"], "--events must be between 0 and 1000000, got -5"],
    [["--events", "-5"], "--events must be between 0 and 1000000, got -5"],
    [["--sessions", "-3"], "--sessions must be between 1 and 100000, got -3"],
    [["--timeout", "-1"], "--timeout must be between 1"],
    [["--report", "--no-report"], "Option '--report' argument is ambiguous"],
    [["--report", "x.html", "--no-report"], "--report and --no-report cannot be used together"],
    [["--report="], "--report needs a file name"],
    [["--dist="], "--dist needs a directory"],
    [["--events", "1.5"], "--events must be a whole number"],
    [["--sessions", "0"], "--sessions must be between 1"],
    [["--poison-rate", "2"], "--poison-rate must be a number from 0 to 1"],
    [["--transient-rate", "abc"], "--transient-rate must be a number from 0 to 1"],
    [["--time-scale", "0"], "--time-scale must be between 1"],
    [["--env", "../prod"], "--env must name an environment"],
    [["--frobnicate"], "Unknown option '--frobnicate'"],
    [["stray"], "Unexpected argument 'stray'"],
    [["--events"], "Option '--events <value>' argument missing"],
    [
      ["--partial-split-accounting", "free"],
      '--partial-split-accounting must be one of split-free, counts-attempt, got "free"',
    ],
    [["--partial-split-accounting="], "--partial-split-accounting must be one of split-free, counts-attempt"],
    // A served stack runs no scenario: these were ignored without a word.
    [
      ["--serve", "--events", "10"],
      "--events is for a scenario run, and --serve runs none (--seed and --timeout are for --serve --drill): drop it, or drop --serve",
    ],
    [
      ["--serve", "--json", "--no-report"],
      "--json, --no-report are for a scenario run, and --serve runs none",
    ],
    [["--serve", "--seed", "7"], "--seed is for a scenario run, and --serve runs none"],
    [["--serve", "--drill", "--jobs", "5"], "--jobs is for a scenario run, and --serve runs none: drop it"],
  ])("refuses %j: %s", (argv, message) => {
    expect(() => parseCli(argv)).toThrow(UsageError);
    expect(() => parseCli(argv)).toThrow(message);
  });
});
