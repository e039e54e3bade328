import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { DynamoDBClient, GetItemCommand, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { KinesisClient, PutRecordsCommand } from "@aws-sdk/client-kinesis";
import { CURRENT_SPEC_VERSION, encodeLifecycleEvent } from "@mcp-pipeline/contracts";
import { startDynamoDb, startKinesis, startSqsS3 } from "@mcp-pipeline/emulators";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliError, parseCli } from "../local/cli.ts";
import { buildScenario } from "../local/scenario.ts";
import { bundleAll } from "./bundles.ts";

const root = join(import.meta.dirname, "../..");
let dist: string;
/** The child processes' temporary directory: other test files create their own mcp-local-* in parallel. */
let childTmp: string;

beforeAll(async () => {
  dist = await bundleAll();
  childTmp = await mkdtemp(join(tmpdir(), "npm-start-test-"));
}, 120_000);
afterAll(async () => {
  await rm(dist, { recursive: true, force: true });
  await rm(childTmp, { recursive: true, force: true });
});

/** `npm start` without the build step: the same entry point on the test runtime's Node 22. */
function start(args: string[]): ChildProcess {
  return spawn(
    process.execPath,
    ["--import", "tsx", join(root, "scripts/local/start.ts"), "--dist", dist, ...args],
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
      ...["--seed", "7", "--timeout", "120"],
    ];
    const { code, stdout, stderr } = await collect(start([...options, ...faults, "--json"]));
    expect(code, stderr).toBe(0);
    const summary = JSON.parse(stdout);
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
    });
    // At least once: a poison record redelivered after a later retry is quarantined again (same object).
    expect(summary.quarantined).toBeGreaterThanOrEqual(poisonRecords);
    expect(summary.sentToDlq).toBeGreaterThanOrEqual(poisonJobs);
    expect(summary.retried).toBeGreaterThan(0);
    // Stuck events exhausted their retries, reached the failure queue, were stored by dlq-redrive and,
    // once the fault stopped, replayed and applied.
    expect(scenario.stream.filter((s) => s.kind === "stuck").length).toBeGreaterThan(0);
    expect(summary.toFailureDestination).toBeGreaterThan(0);
    expect(summary.storedByRedrive).toBeGreaterThanOrEqual(summary.toFailureDestination);
    expect(summary.replayed).toBeGreaterThan(0);
    expect(summary.applied).toBeGreaterThanOrEqual(
      scenario.stream.filter((s) => s.kind === "event" || s.kind === "stuck").length,
    );
    expect(summary.latencyMs.p99).toBeGreaterThanOrEqual(summary.latencyMs.p50);
    expect(stderr).toContain("accounted");
    // Nothing left behind: the copies of the function code are removed on exit.
    expect(await leftovers()).toEqual(before);
  }, 180_000);

  it("--serve keeps the stack up: records put with a plain AWS SDK client are applied to the table", async () => {
    const before = await leftovers();
    const child = start(["--serve"]);
    const done = collect(child);
    const env: Record<string, string> = {};
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the stack did not print ready")), 60_000);
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
        if (line === "ready") {
          clearTimeout(timer);
          resolve();
        }
        const match = /^([A-Z0-9_]+)=(.*)$/.exec(line);
        if (match) env[match[1] as string] = match[2] as string;
      });
    });
    expect(env.AWS_ENDPOINT_URL_KINESIS).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
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
    const until = Date.now() + 30_000;
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
  }, 120_000);

  it("uses the endpoints given as AWS_ENDPOINT_URL_* instead of starting emulators", async () => {
    const [dynamodb, kinesis, sqsS3] = await Promise.all([startDynamoDb(), startKinesis(), startSqsS3()]);
    try {
      const child = spawn(
        process.execPath,
        [
          "--import",
          "tsx",
          join(root, "scripts/local/start.ts"),
          "--dist",
          dist,
          "--events",
          "30",
          "--jobs",
          "5",
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
  }, 120_000);

  it("refuses an unknown environment with exit code 2 and the file it looked for", async () => {
    const { code, stderr } = await collect(start(["--env", "nowhere"]));
    expect(code).toBe(2);
    expect(stderr).toContain("terraform/environments/nowhere/terraform.tfvars.json");
  });
});

describe("npm start's command line", () => {
  it("has defaults for everything", () => {
    expect(parseCli([])).toMatchObject({
      env: "dev",
      timeScale: 10,
      json: false,
      serve: false,
      scenario: { events: 2000, jobs: 300, fifoJobs: 100, sessions: 20, seed: 42 },
    });
  });

  it.each([
    [["--events=-5"], "--events must be a whole number"],
    [["--events", "-5"], "argument is ambiguous"],
    [["--events", "1.5"], "--events must be a whole number"],
    [["--sessions", "0"], "--sessions must be between 1"],
    [["--poison-rate", "2"], "--poison-rate must be a number from 0 to 1"],
    [["--transient-rate", "abc"], "--transient-rate must be a number from 0 to 1"],
    [["--time-scale", "0"], "--time-scale must be between 1"],
    [["--env", "../prod"], "--env must name an environment"],
    [["--frobnicate"], "Unknown option '--frobnicate'"],
    [["stray"], "Unexpected argument 'stray'"],
    [["--events"], "Option '--events <value>' argument missing"],
  ])("refuses %j: %s", (argv, message) => {
    expect(() => parseCli(argv)).toThrow(CliError);
    expect(() => parseCli(argv)).toThrow(message);
  });
});
