/**
 * Issue 26 item 10: `npm start -- --serve --drill` leaves real failures for an operator to recover, and
 * `npm run drill:check` says when the operator is done. Driven as an operator drives it: the stack in a
 * child process, the served file loaded into the check's environment, the check run as a command. What
 * the drill left is verified by witnesses of its own (the quarantine's reasons, the DLQs' depths, the
 * tool-calls table), not by the check; the recovery is the recovery package's (replay of the given-up
 * records, redrive of the DLQs), as `npm run recover` does it. Then the check is broken on purpose: a
 * poison message deleted from its DLQ is reported lost.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { PurgeQueueCommand } from "@aws-sdk/client-sqs";
import { bundleAll } from "@mcp-pipeline/emulators/testing";
import { listQuarantine } from "@mcp-pipeline/recovery";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCli } from "../../src/pipeline/cli.js";
import { DRILL_SIZE } from "../../src/pipeline/drill.js";
import { queueDepth } from "../../src/pipeline/queue-depth.js";
import { type Command, childEnvironment, leftovers, root, startEntry, until } from "../command.js";
import { recoverDrill, servedClients } from "../drill-recovery.js";

let dist: string;
let tmp: string;
let stack: Command | undefined;
let env: Record<string, string> = {};

beforeAll(async () => {
  dist = await bundleAll();
  tmp = await mkdtemp(join(tmpdir(), "npm-start-drill-"));
}, 300_000);
afterAll(async () => {
  if (stack && stack.child.exitCode === null) {
    stack.child.kill("SIGINT");
    await stack.exited;
  }
  await rm(dist, { recursive: true, force: true });
  await rm(tmp, { recursive: true, force: true });
});

/** `npm run drill:check` in a shell that loaded the served file. */
function drillCheck(args: readonly string[] = [], extra: NodeJS.ProcessEnv = {}) {
  const result = spawnSync("npm", ["run", "--silent", "drill:check", "--", ...args], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, ...env, ...extra },
    timeout: 120_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const clients = () => servedClients(env);

describe("npm start -- --serve --drill", () => {
  it("refuses --drill without --serve, and drill:check without a drill's file", () => {
    expect(() => parseCli(["--drill"])).toThrow("--drill needs --serve");
    const { code, stdout, stderr } = drillCheck([], { DRILL_LEDGER: "" });
    expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
    expect(stderr.split("\n")[0]).toBe(
      "DRILL_LEDGER is not set: this checks a stack started with npm start -- --serve --drill; load the served file first: set -a; . /tmp/stack.env; set +a",
    );
  }, 120_000);

  it("leaves failures of every kind, made by the pipeline, and prints # ready only then", async () => {
    // A generous bound for setting the failures in place on a busy machine: each outage job needs its
    // queue's maxReceiveCount receives.
    stack = startEntry(["--serve", "--drill", "--dist", dist, "--timeout", "900"], childEnvironment(tmp));
    env = await stack.ready;
    expect(env.DRILL_LEDGER).toMatch(/\/mcp-local-[^/]+\/drill-ledger\.json$/);
    expect(stack.stderr()).toContain("drill ready: failures to recover");
    const { sqs, s3, dynamodb } = clients();
    try {
      // The quarantine holds a record of every reason the pipeline quarantines for in a drill.
      const reasons = new Set(
        (await listQuarantine(s3, env.QUARANTINE_BUCKET as string)).map((e) => e.record.reason.code),
      );
      expect([...reasons].sort()).toEqual(
        [
          "RetryAttemptsExhausted",
          "bad-encoding",
          "bad-json",
          "schema-violation",
          "unsupported-version",
        ].sort(),
      );
      // Poison in each DLQ; the outage jobs with the tool queue's poison.
      expect(await queueDepth(sqs, env.TOOL_JOBS_DLQ_URL as string)).toBe(3 + DRILL_SIZE.outageJobs);
      expect(await queueDepth(sqs, env.SESSION_JOBS_DLQ_URL as string)).toBeGreaterThanOrEqual(3);
      expect(await queueDepth(sqs, env.STREAM_FAILURES_DLQ_URL as string)).toBe(1);
      // The stalled group: the jobs behind its first ones have not run (FIFO order, §3).
      const status = async (callId: string) =>
        (
          await dynamodb.send(
            new GetItemCommand({
              TableName: env.TOOL_CALLS_TABLE,
              Key: { callId: { S: callId } },
              ConsistentRead: true,
            }),
          )
        ).Item?.status?.S;
      const follower = `drill-42-stalled-${DRILL_SIZE.stalledHeads}`;
      expect(await status(follower)).not.toBe("completed");
      expect(await queueDepth(sqs, env.SESSION_JOBS_QUEUE_URL as string)).toBeGreaterThanOrEqual(
        DRILL_SIZE.stalledFollowers,
      );
    } finally {
      for (const c of [sqs, s3, dynamodb]) c.destroy();
    }
  }, 1_200_000);

  it("drill:check says NOT DONE and names what is left where, exit 1", () => {
    const { code, stdout } = drillCheck();
    expect(code).toBe(1);
    expect(stdout).toMatch(/^NOT DONE: \d+ input\(s\) still to recover$/m);
    expect(stdout).toMatch(/^ {2}lost {6}0 {3}found nowhere$/m);
    for (let i = 0; i < DRILL_SIZE.givenUpEvents; i++)
      expect(stdout).toContain(
        `not done: event stuck-drill-42-${i}: in the quarantine (RetryAttemptsExhausted), not applied`,
      );
    for (let i = 0; i < DRILL_SIZE.outageJobs; i++)
      expect(stdout).toContain(`not done: job drill-42-outage-${i}: in the tool-jobs DLQ`);
    const verdict = JSON.parse(drillCheck(["--json"]).stdout) as {
      done: boolean;
      counts: Record<string, number>;
    };
    expect(verdict).toMatchObject({ done: false, counts: { lost: 0 } });
  }, 120_000);

  it("once recovered (the downstream back, the given-up records replayed, the DLQs redriven): DONE, exit 0", async () => {
    if (!stack) throw new Error("the drill's stack did not start");
    const running = stack;
    await until("the drill's downstream to come back up", () =>
      running.stderr().includes("the downstream is back up") ? true : undefined,
    );
    expect((await recoverDrill(env)).givenUp).toBe(DRILL_SIZE.givenUpEvents);
    const { sqs, s3, kinesis, dynamodb } = clients();
    try {
      // Done once the replayed events are applied and the redriven jobs completed; the redriven poison
      // is back in its DLQ.
      const done = await until("drill:check to say DONE", () => {
        const check = drillCheck();
        return check.code === 0 ? check : undefined;
      });
      expect(done.stdout).toMatch(
        /^DONE: nothing was lost; every valid input is applied and every poison kept$/m,
      );
      expect(done.stdout).toMatch(/^ {2}not done {2}0 /m);

      // Broken on purpose: a person deletes the permanent poison the failure queue's DLQ kept.
      await sqs.send(new PurgeQueueCommand({ QueueUrl: env.STREAM_FAILURES_DLQ_URL }));
      const broken = await until("drill:check to see the deleted poison", () => {
        const check = drillCheck();
        return check.code === 1 ? check : undefined;
      });
      expect(broken.stdout).toContain(
        "LOST: poison message in stream-failures (not an on-failure record): nowhere: permanent poison is kept in the stream-failures DLQ, never deleted",
      );
      expect(broken.stdout).toMatch(/^NOT DONE: 1 input\(s\) lost$/m);
    } finally {
      for (const c of [sqs, s3, kinesis, dynamodb]) c.destroy();
    }
  }, 1_200_000);

  it("stopped, the stack takes its ledger with it: drill:check says so, exit 2", async () => {
    if (!stack) throw new Error("the drill's stack did not start");
    stack.child.kill("SIGINT");
    expect((await stack.exited).code).toBe(0);
    expect(await leftovers(tmp)).toEqual([]);
    const { code, stderr } = drillCheck();
    expect(code).toBe(2);
    expect(stderr).toContain("cannot be read (ENOENT): is the drill's stack still running?");
  }, 120_000);
});
