import { describe, expect, it } from "vitest";
import { DiagnosticsFileError, diagnose, formatTimeline, readDiagnostics } from "../../src/diagnostics.js";
import { RunCause } from "../../src/tool-runs.js";
import { RunOutcome } from "../../src/witness.js";

const T = Date.UTC(2026, 11, 7, 2, 0, 0);

/** Job 7-335 as the lost attempt met it: the first run answered, its invocation ended, a second run after. */
const job = diagnose({
  callId: "job-7-335",
  rejected: false,
  runs: [
    {
      callId: "job-7-335",
      key: "job-7-335",
      receivedAt: T + 10,
      earliestAt: T + 8,
      answeredAt: T + 60,
      outcome: RunOutcome.Applied,
      effectId: "job-7-335#1",
      clientGone: false,
    },
    {
      callId: "job-7-335",
      key: "job-7-335",
      receivedAt: T + 900,
      earliestAt: T + 898,
      answeredAt: T + 901,
      outcome: RunOutcome.Replayed,
      effectId: "job-7-335#1",
      clientGone: false,
    },
  ],
  effects: [{ callId: "job-7-335", effectId: "job-7-335#1", key: "job-7-335", at: T + 60, ordinal: 3 }],
  incidents: [{ at: T + 70, cause: RunCause.FaultAfterRun }],
  // With the requests each one's sandbox recorded sending for the job.
  invocations: [
    { from: T, at: T + 100, requestId: "r-1", sent: [{ at: T + 7, key: "job-7-335" }] },
    { from: T + 800, at: T + 950, requestId: "r-2", sent: [{ at: T + 897, key: "job-7-335" }] },
  ],
  storedAt: undefined,
});

describe("a job's diagnostics and timeline (--diagnostics, --explain)", () => {
  it("prints every moment from the job's first, in order, then the cause chosen for each run after the first", () => {
    expect(formatTimeline(job).split("\n")).toEqual([
      "job job-7-335: 2 runs, 1 effects; times in ms from 2026-12-07T02:00:00.000Z",
      "  +  0  invocation 1 starts",
      "  +  7  invocation 1 sends the job's request (key job-7-335; its sandbox's record)",
      "  + 10  run 1 received (key job-7-335; sent no earlier than +8; sent by invocation 1, as its sandbox recorded)",
      "  + 60  run 1 answered: applied job-7-335#1",
      "  + 70  incident: a fault hit the job's requests after the run",
      "  +100  invocation 1 ends (100 ms)",
      "  +800  invocation 2 starts",
      "  +897  invocation 2 sends the job's request (key job-7-335; its sandbox's record)",
      "  +900  run 2 received (key job-7-335; sent no earlier than +898; sent by invocation 2, as its sandbox recorded)",
      "  +901  run 2 answered: replayed job-7-335#1",
      "  +950  invocation 2 ends (150 ms)",
      `run 2: cause: a fault hit the job's requests after the run (at ${T + 70}, after the run before was answered at ${T + 60}, inside an invocation that held it)`,
    ]);
  });

  it("says a run's sender was inferred from the times when no sandbox's record pairs with it (a file written before the records)", () => {
    const unrecorded = diagnose({
      callId: "job-7-335",
      rejected: false,
      runs: job.runs.map((r) => ({ ...r, callId: "job-7-335" })),
      effects: [],
      incidents: [],
      invocations: job.invocations.map((i) => ({ from: i.from, at: i.at })),
      storedAt: undefined,
    });
    expect(unrecorded.runs.map((r) => r.sentBy)).toEqual([
      { invocations: [1], known: "inferred" },
      { invocations: [2], known: "inferred" },
    ]);
    expect(formatTimeline(unrecorded)).toContain("sent by invocation 2, inferred from the times");
  });

  it("says UNEXPLAINED, and why, for a run nothing explains", () => {
    const unexplained = diagnose({
      callId: "fifo-7-9",
      rejected: false,
      runs: job.runs.map((r) => ({ ...r, callId: "fifo-7-9" })),
      effects: [],
      incidents: [],
      invocations: job.invocations,
      storedAt: T + 80,
    });
    expect(formatTimeline(unexplained)).toContain("outcome stored (the DynamoDB door saw");
    expect(formatTimeline(unexplained).split("\n").at(-1)).toBe(
      `run 2: UNEXPLAINED (the job's outcome was stored at ${T + 80}, before this run at ${T + 900})`,
    );
  });

  it("reads back the file it writes, with each run's arrival bound, and refuses one that is not a diagnostics file", () => {
    expect(job.runs.map((r) => [r.earliestAt, r.receivedAt])).toEqual([
      [T + 8, T + 10],
      [T + 898, T + 900],
    ]);
    const text = JSON.stringify({ seed: 7, jobs: [job] });
    expect(formatTimeline(readDiagnostics(text).jobs[0] as typeof job)).toBe(formatTimeline(job));
    expect(() => readDiagnostics("{ nope")).toThrow(DiagnosticsFileError);
    expect(() => readDiagnostics("[]")).toThrow('expected { "seed": N, "jobs": [...] }');
    expect(() => readDiagnostics(JSON.stringify({ seed: 7, jobs: [{ callId: "x", runs: [{}] }] }))).toThrow(
      "jobs[0] is not a job's diagnostics",
    );
    const badBound = { ...job, runs: [{ ...job.runs[0], earliestAt: "soon" }] };
    expect(() => readDiagnostics(JSON.stringify({ seed: 7, jobs: [badBound] }))).toThrow(
      "jobs[0] is not a job's diagnostics",
    );
  });
});
