import { describe, expect, it } from "vitest";
import { formatTable } from "../../src/report.js";
import { type ChaosResult, RunVerdict, verdictOf } from "../../src/run.js";
import { TimeoutCause } from "../../src/watchdog.js";

const timedOut: ChaosResult = {
  seed: 7,
  partialSplits: "split-free",
  durationMs: 236_400,
  phases: { startMs: 1_400, productionMs: 180_000, settleMs: 55_000, rounds: [], judgeMs: 0 },
  timedOut: true,
  timeout: { cause: TimeoutCause.NoProgress, quietMs: 180_200 },
  pass: false,
  checks: [
    {
      name: "every input accounted for (applied, quarantined or in a DLQ)",
      pass: true,
      detail: "timed out: 1 still in flight (job job-7-28)",
    },
  ],
  counts: {
    streamRecords: 411,
    streamKinds: { event: 387, stuck: 7, duplicate: 11, poison: 6 },
    jobs: 65,
    jobMessages: 66,
    poisonJobs: 2,
    calls: 140,
    callsWritten: 201,
    quarantineObjects: 173,
    failureRanges: 7,
    deadLettered: 2,
  },
  faults: {
    dynamodbFaults: 14,
    dynamodbAfterWriteFaults: 6,
    s3Faults: 11,
    emulatorErrors: 3,
    throttles: 5,
    exceptions: 2,
    timeouts: 2,
    stuckWriteRefusals: 94,
    sqsRefusedConnections: 80,
    sqsDownMs: 760,
    replayedRecords: 0,
    redrivenJobs: 0,
  },
  proof: {
    toolRuns: 63,
    maxRunsPerJob: 1,
    jobsRunMoreThanOnce: 0,
    runSenders: { recorded: 63, ambiguous: 0, inferred: 0 },
    witnessEffects: 62,
    oracleMismatches: 0,
    effectOrderViolations: 0,
    replayRounds: 0,
    replayPhaseFaults: 0,
    givenUpAgainAfterReplay: 0,
  },
  reshard: [],
  bounds: { partitionKeyMs: 54_500, groupMs: 75_500 },
  inFlight: ["job job-7-28"],
  productFailures: [],
  diagnostics: [],
};

describe("the chaos run's table", () => {
  it("says where the run's wall time went, step by step, each recovery round in its steps", () => {
    const recovered: ChaosResult = {
      ...timedOut,
      durationMs: 447_300,
      timedOut: false,
      phases: {
        startMs: 1_500,
        productionMs: 244_700,
        settleMs: 36_800,
        rounds: [
          { quarantineMs: 2_800, replayMs: 80_600, settleMs: 37_400 },
          { quarantineMs: 0, replayMs: 43_400, settleMs: 100 },
        ],
        judgeMs: 2_900,
      },
    };
    const timeOf = (table: string) => table.split("\n").find((line) => line.startsWith("time: "));
    expect(timeOf(formatTable(recovered))).toBe(
      "time: start 1.5 s, production 244.7 s, settle 36.8 s, recovery 164.3 s (round 1: quarantine 2.8 s, replay 80.6 s, settle 37.4 s; round 2: quarantine 0.0 s, replay 43.4 s, settle 0.1 s), end state and verdict 2.9 s",
    );
    expect(timeOf(formatTable(timedOut))).toBe(
      "time: start 1.4 s, production 180.0 s, settle 55.0 s, no recovery, end state and verdict 0.0 s",
    );
  });

  it("says a run that stopped moving was stuck, not slow, and names what was in flight", () => {
    const table = formatTable(timedOut);
    expect(table.split("\n")[0]).toBe(
      "chaos run, seed 7: 236.4 s, TIMED OUT (nothing moved for 180 s: stuck, not slow)",
    );
    expect(table).toContain("timed out: still in flight (not lost): job job-7-28");
    expect(table).toContain("3 emulator errors (not injected)");
    expect(table.split("\n").at(-1)).toBe("verdict: timed out");
  });

  it("says FAIL, not timed out, when a check judged before the end failed: a second effect is no slowness", () => {
    const failed = {
      ...timedOut,
      productFailures: ["one tool effect per completed job, none per refused one (witness)"],
    };
    expect(formatTable(failed).split("\n").at(-1)).toBe(
      "verdict: FAIL (and timed out: what only the end shows was not judged)",
    );
    expect(verdictOf(failed)).toBe(RunVerdict.Fail);
    expect(verdictOf(timedOut)).toBe(RunVerdict.TimedOut);
    expect(verdictOf({ ...timedOut, timedOut: false, pass: true })).toBe(RunVerdict.Pass);
  });

  it("says which accounting of a bisect-on partial split the mapping ran with (AWS does not say, §1.4)", () => {
    expect(formatTable(timedOut).split("\n")[1]).toBe(
      "kinesis: partial splits split-free (bisect on: a partial answer's split uses no retry; AWS does not say which (§1.4), --partial-split-accounting chooses)",
    );
    expect(formatTable({ ...timedOut, partialSplits: "counts-attempt" }).split("\n")[1]).toContain(
      "kinesis: partial splits counts-attempt (bisect on: a partial answer's split uses a retry;",
    );
  });

  it("says a run that was still moving at its deadline ran out of time", () => {
    const table = formatTable({ ...timedOut, timeout: { cause: TimeoutCause.Deadline, quietMs: 2_000 } });
    expect(table.split("\n")[0]).toBe(
      "chaos run, seed 7: 236.4 s, TIMED OUT (deadline; nothing moved for the last 2 s)",
    );
  });
});
