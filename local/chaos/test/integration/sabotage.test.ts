/**
 * Every check of the verdict can fail: for each, the product is broken on purpose (a patch of one source
 * file, bundled into the function as the build would) or the operator's replay is, and a short chaos run
 * must fail that check, named. A check that no broken build can fail would prove nothing.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { bundleAll, type FunctionName, type SourcePatch } from "@mcp-pipeline/emulators/testing";
import { replayQuarantine } from "@mcp-pipeline/recovery";
import { loadSettings } from "@mcp-pipeline/settings";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPlan, type ChaosOptions, DEFAULT_RATES, type FaultRates } from "../../src/plan.js";
import type { Replay } from "../../src/recover.js";
import { formatTable } from "../../src/report.js";
import { runChaos, stallBounds } from "../../src/run.js";
import { CheckName } from "../../src/verdict.js";

const root = join(import.meta.dirname, "../../../..");
let clean: string;
const made: string[] = [];

beforeAll(async () => {
  clean = await bundleAll();
  made.push(clean);
}, 300_000);
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

/** The clean build with the named functions rebuilt from patched sources. */
async function brokenBuild(
  functions: readonly FunctionName[],
  patches: readonly SourcePatch[],
): Promise<string> {
  if (functions.length === 0) return clean;
  const dist = await bundleAll(functions, { patches, completeFrom: clean });
  made.push(dist);
  return dist;
}

/** A small run without the reshard and the restart, and faults only where a sabotage needs them. */
const QUIET: FaultRates = {
  ...DEFAULT_RATES,
  poison: 0,
  transient: 0,
  duplicate: 0,
  stuck: 0,
  stuckTwice: 0,
  reject: 0,
  throttle: 0,
  exception: 0,
  timeout: 0,
  dynamodb: 0,
  dynamodbAfterWrite: 0,
  s3: 0,
};
const run = (rates: Partial<FaultRates>, workload: Partial<ChaosOptions> = {}): ChaosOptions => ({
  events: 150,
  jobs: 10,
  fifoJobs: 10,
  sessions: 4,
  seed: 11,
  chunk: 50,
  sqsOutageMs: 0,
  disruptions: false,
  rates: { ...QUIET, ...rates },
  ...workload,
});

const PROCESSOR_CORE = "functions/processor/src/core.ts";
const FOLD_ONE_CALL = "write = deps.toolCalls.applyEvents(group?.events ?? [], cache, requests);";

interface Sabotage {
  readonly what: string;
  readonly check: string;
  readonly functions: readonly FunctionName[];
  readonly patches: readonly SourcePatch[];
  readonly options: ChaosOptions;
  readonly replay?: Replay;
  readonly stallMarginMs?: number;
  /** The run's time scale where the default (20) would put deadlines too near for the sabotage. */
  readonly timeScale?: number;
}

const SETTINGS = await loadSettings(root, "dev");
/** The stall checks' names carry their bounds, which the margin the run is given sets (0 here). */
const bounds = stallBounds(SETTINGS, 20, 0, 0);
const STALL_KEY = `no partition key stalled over ${(bounds.partitionKeyMs / 1000).toFixed(1)} s`;
const STALL_GROUP = `no FIFO group stalled over ${(bounds.groupMs / 1000).toFixed(1)} s`;

/** The run of a job under its claim: where the worker decides to run the tool and publishes the outcome. */
const RUN_JOB = "packages/worker/src/run-job.ts";
const RUN_ONCE = "packages/tool-calls/src/idempotency/run-once.ts";
/** A worker that does not trust a stored outcome: every delivery of a job runs its tool again. */
const RUN_AGAIN_ON_REDELIVERY: SourcePatch[] = [
  {
    file: RUN_ONCE,
    find: `  if (completed?.has(key)) return "duplicate";
  const claimed = await store.claim(key, leaseMs, options);
  if (claimed.status === "completed") return "duplicate";`,
    replace: `  const claimed = await store.claim(key, leaseMs, options);
  if (claimed.status === "completed") {
    await effect({ key, token: "sabotage", leaseExpiresAt: Date.now() + leaseMs });
    return "duplicate";
  }`,
  },
  {
    file: RUN_JOB,
    find: 'if (taken.status === "decided") {',
    replace: 'if (taken.status === "decided" && claim.token !== "sabotage") {',
  },
];
const WORKERS: FunctionName[] = ["tool-worker", "fifo-worker"];

const SABOTAGES: Sabotage[] = [
  {
    what: "a worker that runs a job's tool again on every redelivery",
    check: CheckName.ToolRuns,
    functions: WORKERS,
    patches: RUN_AGAIN_ON_REDELIVERY,
    options: run({ duplicate: 0.5 }, { events: 20 }),
  },
  {
    // Issue 24 review: a cut-off answer used to excuse the next run whoever cut it off. Here the tool hangs
    // up on the first request of each job 4 ms after sending it (the witness answers 5-50 ms after reading
    // it, so never before), far from its invocation's deadline: the rerun that follows has no cause the
    // product did not make. The old rule excused all 17 such reruns of a run; this one flags them.
    what: "a worker that hangs up on its tool's first request of a job, no deadline near",
    check: CheckName.ToolRuns,
    functions: WORKERS,
    // The first request of each job asks the witness to hold its answer 0.4 s and is abandoned after 0.1 s
    // (the 4 ms of an earlier version could end before the request was even written, on a busy machine):
    // the witness reads the request before the client leaves. The run's time scale is 5, so that the
    // invocation counts as out of time only from 5.4 s: at 20 (from 1.35 s) a loaded machine made most
    // invocations run out of time, which rightly excuses a cut-off answer (28 of 30 reruns, beside a
    // 100,000-event run), and the check failed on 3 reruns only.
    patches: [
      {
        file: "packages/tools/src/http-request.ts",
        find: "      let url = resolveJobPath(base, path);\n",
        replace: `      const hungUp = ((globalThis as { hungUp?: Set<string> }).hungUp ??= new Set());
      const hangUp = !hungUp.has(idempotencyKey);
      hungUp.add(idempotencyKey);
      if (hangUp && body) body = { ...body, latencyMs: 400 };
      let url = resolveJobPath(base, path);
`,
      },
      {
        file: "packages/tools/src/http-request.ts",
        find: "            signal,\n",
        replace:
          "            signal: hangUp ? AbortSignal.any([signal, AbortSignal.timeout(100)]) : signal,\n",
      },
    ],
    options: run({}, { events: 20, jobs: 30, fifoJobs: 0 }),
    timeScale: 5,
  },
  {
    what: "a worker that runs the tool again on redelivery and sends no idempotency key",
    check: CheckName.ToolEffects,
    functions: WORKERS,
    patches: [
      ...RUN_AGAIN_ON_REDELIVERY,
      {
        file: "packages/tools/src/http-request.ts",
        find: '"idempotency-key": idempotencyKey,',
        replace: "",
      },
    ],
    options: run({ duplicate: 0.5 }, { events: 20 }),
  },
  {
    what: "a worker whose idempotency key changes with the attempt",
    check: CheckName.SameKey,
    functions: WORKERS,
    patches: [
      {
        file: "packages/tools/src/registry/registry.ts",
        find: "idempotencyKey: toolRunIdempotencyKey(call.callId),",
        replace: 'idempotencyKey: toolRunIdempotencyKey(call.callId + "#" + call.attempt),',
      },
    ],
    options: run({ transient: 0.5 }, { events: 20 }),
  },
  {
    what: "a worker that stores a job's result but never publishes its outcome",
    check: CheckName.Outcomes,
    functions: WORKERS,
    patches: [
      {
        file: RUN_JOB,
        find: `  await deps.publish([terminalEventOf(applied.state) ?? event], requests);
  return JobRun.Succeeded;`,
        replace: "  return JobRun.Succeeded;",
      },
    ],
    options: run({}, { events: 20 }),
  },
  {
    what: "a processor that skips an event (a call's second start)",
    check: CheckName.Oracle,
    functions: ["processor"],
    patches: [
      {
        file: PROCESSOR_CORE,
        find: FOLD_ONE_CALL,
        replace:
          'write = deps.toolCalls.applyEvents((group?.events ?? []).filter((e) => !(e.type === "tool_call.started" && e.attempt === 2)), cache, requests);',
      },
    ],
    options: run({}),
  },
  {
    what: "a processor that applies a call's events in the reverse of their order",
    check: CheckName.EffectOrder,
    functions: ["processor"],
    patches: [
      {
        file: PROCESSOR_CORE,
        find: FOLD_ONE_CALL,
        replace: "write = deps.toolCalls.applyEvents([...(group?.events ?? [])].reverse(), cache, requests);",
      },
    ],
    options: run({}),
  },
  {
    what: "a store that writes a call over what it did not read (no condition, no read)",
    check: CheckName.NoRegression,
    functions: ["processor"],
    patches: [
      {
        file: "packages/tool-calls/src/store.ts",
        find: "const current = known === undefined ? await this.get(callId, options) : (known ?? undefined);\n      const folded",
        replace: "const current = undefined as ToolCallState | undefined;\n      const folded",
      },
      {
        file: "packages/tool-calls/src/store.ts",
        find: `        ...(current === undefined
          ? { ConditionExpression: "attribute_not_exists(callId)" }
          : {
              ConditionExpression: "version = :version",
              ExpressionAttributeValues: { ":version": current.version },
            }),`,
        replace: "",
      },
    ],
    options: run({}),
  },
  {
    what: "a processor that acknowledges a poison record without quarantining it",
    check: CheckName.Accounted,
    functions: ["processor"],
    patches: [
      {
        file: PROCESSOR_CORE,
        find: "quarantine: async (record, reason, options = {}) => {",
        replace: "quarantine: async (record, reason, options = {}) => { if (record) return;",
      },
    ],
    options: run({ poison: 0.05 }),
  },
  {
    what: "a processor that quarantines a poison record without its bytes",
    check: CheckName.Accounted,
    functions: ["processor"],
    patches: [
      {
        file: PROCESSOR_CORE,
        find: "data: kinesisDataOf(record),",
        replace: 'data: Buffer.from("not the record").toString("base64"),',
      },
    ],
    options: run({ poison: 0.05 }),
  },
  {
    what: "a fifo-worker that runs a group's messages at once, not in order",
    check: CheckName.FifoOrder,
    functions: ["fifo-worker"],
    patches: [
      {
        file: "packages/worker/src/process-jobs.ts",
        find: "deps.mode === QueueMode.Fifo ? processSqsFifoBatch : processSqsBatch",
        replace: "processSqsBatch",
      },
    ],
    options: run({}, { jobs: 0, fifoJobs: 40, sessions: 2 }),
  },
  {
    what: "a processor that is slow on one partition key (each of its records waits 1 s)",
    check: STALL_KEY,
    functions: ["processor"],
    patches: [
      {
        file: PROCESSOR_CORE,
        find: "return async (event, index) => {",
        replace:
          'return async (event, index) => { if (event.sessionId === "session-0") await new Promise((r) => setTimeout(r, 1000));',
      },
    ],
    options: run({}, { events: 200, jobs: 0, fifoJobs: 0, sessions: 2, chunk: 200 }),
    stallMarginMs: 0,
  },
  {
    what: "a fifo-worker that hides a failed job for 60 s, past what the queue's settings allow",
    check: STALL_GROUP,
    functions: ["fifo-worker"],
    patches: [
      {
        file: "packages/worker/src/redelivery-backoff.ts",
        find: "return Math.min(Math.round(ms / 1000), Math.floor(backoff.capMs / 1000));",
        replace: "return 60;",
      },
    ],
    options: run({ transient: 1 }, { events: 20, jobs: 0, fifoJobs: 1, sessions: 1 }),
    stallMarginMs: 0,
  },
  {
    what: "an operator's replay that leaves one record out",
    check: CheckName.Lost,
    functions: [],
    patches: [],
    options: run({ stuck: 0.05 }),
    replay: (s3, kinesis, bucket, entries, options) =>
      replayQuarantine(s3, kinesis, bucket, entries.slice(1), options),
  },
  {
    // Issue 24, defect 2 put back: a record any object of which a replay marked is taken as replayed, so
    // one given up again after its replay (a stuck event released only at the second round) stays out.
    what: "an operator's replay that skips a record given up again after its replay",
    check: CheckName.Lost,
    functions: [],
    patches: [],
    options: run({ stuck: 0.05, stuckTwice: 1 }),
    replay: (s3, kinesis, bucket, entries, options) =>
      replayQuarantine(
        s3,
        kinesis,
        bucket,
        entries.filter((e) => e.objects.every((o) => o.replayedAt === undefined)),
        options,
      ),
  },
];

describe("each check of the chaos verdict fails on a product broken on purpose", () => {
  it.each(SABOTAGES)(
    "$what: fails “$check”",
    async ({ functions, patches, options, replay, check, stallMarginMs, timeScale = 20 }) => {
      // Prepare
      const settings = SETTINGS;
      const distDir = await brokenBuild(functions, patches);

      // Act
      const result = await runChaos(buildPlan(options), {
        settings,
        timeScale,
        timeoutMs: 600_000,
        stallTimeoutMs: 180_000,
        distDir,
        ...(replay ? { replay } : {}),
        ...(stallMarginMs !== undefined ? { stallMarginMs } : {}),
      });

      // Assess: the run ended (a run out of time judges nothing) and failed the check, by name.
      const table = formatTable(result);
      process.stderr.write(`sabotage table:\n${table}\n`);
      expect(result.timedOut, table).toBe(false);
      expect(
        result.checks.find((c) => c.name === check),
        table,
      ).toMatchObject({ pass: false });
      expect(table).toMatch(new RegExp(`${check.replace(/[()§.,]/g, "\\$&")} +FAIL`));
    },
    900_000,
  );
});
