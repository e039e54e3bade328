import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundleAll, captureStreams } from "@mcp-pipeline/emulators/testing";
import { loadSettings } from "@mcp-pipeline/settings";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main, TIMED_OUT } from "../../src/cli.js";
import { buildPlan, type ChaosOptions, DEFAULT_RATES } from "../../src/plan.js";
import { formatTable } from "../../src/report.js";
import { RunVerdict, runChaos, verdictOf } from "../../src/run.js";
import { CheckName } from "../../src/verdict.js";
import { TimeoutCause } from "../../src/watchdog.js";

const root = join(import.meta.dirname, "../../../..");
let dist: string;

beforeAll(async () => {
  dist = await bundleAll();
}, 300_000);
afterAll(async () => {
  await rm(dist, { recursive: true, force: true });
});

// A short run with every fault kind: rates raised so that each happens in a few hundred events.
const SHORT: ChaosOptions = {
  events: 400,
  jobs: 40,
  fifoJobs: 25,
  sessions: 10,
  seed: 7,
  chunk: 40,
  sqsOutageMs: 500,
  rates: {
    ...DEFAULT_RATES,
    poison: 0.02,
    duplicate: 0.03,
    stuck: 0.01,
    stuckTwice: 0.5,
    throttle: 0.03,
    exception: 0.02,
    timeout: 0.02,
    dynamodb: 0.02,
    dynamodbAfterWrite: 0.01,
    s3: 0.05,
  },
};

/**
 * The run's progress lines for an assertion message: a state seen again (a stuck run prints the same
 * settling line for minutes) is kept once, with how often and since when, so the lines before it stay.
 */
function progressLog() {
  const kept: string[] = [];
  let state = "";
  let first = "";
  let seen = 0;
  return {
    add(line: string): void {
      const stamp = /^\[[\d.]+ s\]/.exec(line)?.[0] ?? "";
      const text = line.slice(stamp.length).replace(/; nothing moved for \d+ s$/, "");
      if (text === state) {
        seen += 1;
        kept[kept.length - 1] = `${line} (seen ${seen} times since ${first})`;
        return;
      }
      [state, first, seen] = [text, stamp, 1];
      kept.push(line);
    },
    last: (count: number) => kept.slice(-count),
  };
}

describe("npm run chaos, a short run", () => {
  it("survives every fault, a reshard, an SQS restart and faults during its replay: every check passes, judged by the witness and the oracle", async () => {
    // Prepare
    const settings = await loadSettings(root, "dev");

    // Act: the run ends when everything is accounted for. A loaded machine is slow, not stuck: the
    // deadline is far, and the run stops sooner only when nothing at all moved for three minutes (the
    // longest wait of a healthy run is a visibility timeout, 9 s at this scale). Progress goes to stderr
    // as it comes (a run that outlives the test's own timeout still shows where it was) and is kept for
    // the assertion messages.
    const progress = progressLog();
    const result = await runChaos(buildPlan(SHORT), {
      settings,
      onProgress: (line) => {
        process.stderr.write(`chaos ${line}\n`);
        progress.add(line);
      },
      // The command's default scale: durations ÷20 (÷10 took 25 minutes for 600 events on a loaded machine).
      timeScale: 20,
      timeoutMs: 1_080_000,
      stallTimeoutMs: 180_000,
      distDir: dist,
    });

    // Assess: the table says why when a check fails. The stall checks compare times with a bound: the
    // command judges them; a test on a shared machine asserts no time (a loaded machine is slow, not
    // stuck), so here they must have been measured, not passed.
    const why = [formatTable(result), "", "last progress lines:", ...progress.last(40)].join("\n");
    // The table in the log of every run, passed or failed: a rare failure is then compared with passes.
    process.stderr.write(`chaos table:\n${formatTable(result)}\n`);
    const timed = (c: { name: string }) => /stalled over/.test(c.name);
    const failed = result.checks.filter((c) => !c.pass && !timed(c));
    expect(result.timedOut, why).toBe(false);
    expect(failed, why).toEqual([]);
    expect(result.checks.filter(timed).map((c) => c.detail)).toEqual([
      expect.stringMatching(/^longest: \d+\.\d s \(session-\d+\)$/),
      expect.stringMatching(/^longest: \d+\.\d s \(session-\d+\)$/),
    ]);
    expect(result.proof).toMatchObject({ oracleMismatches: 0, effectOrderViolations: 0 });
    // The witness saw every job's tool run, calls of several events were judged by the oracle, and the
    // replay met faults and a record given up again after its first replay.
    expect(result.proof.toolRuns).toBeGreaterThanOrEqual(result.counts.jobs - result.counts.poisonJobs);
    // Each of them paired with the request its sandbox recorded sending: no sender left to the times.
    expect(result.proof.runSenders).toMatchObject({ recorded: result.proof.toolRuns, inferred: 0 });
    expect(result.counts.calls).toBeLessThan(result.counts.streamKinds.event);
    expect(result.proof.replayPhaseFaults).toBeGreaterThan(0);
    expect(result.proof.givenUpAgainAfterReplay).toBeGreaterThan(0);
    expect(result.reshard.map((s) => s.action)).toEqual(["split", "merge"]);
    expect(result.faults.replayedRecords).toBeGreaterThan(0);
  }, 1_200_000);

  it("stops at its deadline: timed out, the deadline its cause, no replay, the end state not judged", async () => {
    const settings = await loadSettings(root, "dev");

    // A deadline already past when production starts: nothing is put, the settling says out of time.
    const result = await runChaos(buildPlan(SHORT), {
      settings,
      timeScale: 20,
      timeoutMs: 1,
      distDir: dist,
    });

    expect(result).toMatchObject({
      timedOut: true,
      timeout: { cause: TimeoutCause.Deadline },
      pass: false,
      inFlight: [],
      productFailures: [],
      proof: { replayRounds: 0, toolRuns: 0, witnessEffects: 0 },
      faults: { replayedRecords: 0, redrivenJobs: 0, sqsDownMs: 0 },
      reshard: [],
    });
    expect(verdictOf(result)).toBe(RunVerdict.TimedOut);
    expect(result.checks.find((c) => c.name === CheckName.Accounted)?.detail).toMatch(
      /^not judged: timed out \(0 records, 0 messages; unaccounted 0\)$/,
    );
  }, 300_000);

  it("npm run chaos out of time: the JSON result, the diagnostics file, the --explain line on stderr, exit 3", async () => {
    const dir = await mkdtemp(join(tmpdir(), "chaos-main-"));
    const file = join(dir, "diagnostics.json");

    // One second from before the harness starts: the run is out of time before it could settle.
    const { result, out, err } = await captureStreams(() =>
      main([
        ...["--events", "1", "--jobs", "0", "--fifo-jobs", "0", "--seed", "7", "--timeout", "1"],
        ...["--dist", dist, "--json", "--diagnostics", file, "--explain", "job-7-1"],
      ]),
    );

    expect(result).toBe(TIMED_OUT);
    expect(JSON.parse(out)).toMatchObject({ seed: 7, timedOut: true, pass: false, productFailures: [] });
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ seed: 7, jobs: [] });
    expect(err).toContain(`diagnostics of 0 jobs written to ${file}\n`);
    expect(err).toContain("\n--explain job-7-1: not a job of this run (seed 7)\n");
    await rm(dir, { recursive: true, force: true });
  }, 300_000);
});
