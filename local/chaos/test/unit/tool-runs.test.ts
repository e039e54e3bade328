import { describe, expect, it } from "vitest";
import { workerLeaseMs } from "../../src/observer.js";
import {
  type InvocationWindow,
  type JobToJudge,
  type JudgedRun,
  judgeToolRuns,
  RunCause,
  runSenders,
} from "../../src/tool-runs.js";
import { RunOutcome, type WitnessRun } from "../../src/witness.js";

const run = (
  receivedAt: number,
  outcome: WitnessRun["outcome"] = RunOutcome.Applied,
  extra: Partial<JudgedRun> = {},
): JudgedRun => ({
  callId: "job-1",
  key: "k",
  // A responsive witness: its loop ran a few ms before it read the request.
  earliestAt: receivedAt - 3,
  receivedAt,
  answeredAt: receivedAt + 5,
  outcome,
  effectId: outcome === RunOutcome.Applied ? "job-1#1" : undefined,
  clientGone: false,
  ...extra,
});
const effect = { callId: "job-1", effectId: "job-1#1", key: "k", at: 0, ordinal: 0 };
const job = (partial: Partial<JobToJudge>): JobToJudge => ({
  callId: "job-1",
  rejected: false,
  runs: [run(100)],
  effects: [effect],
  incidents: [],
  // The invocations handed the job: by default one that held every run of these tests.
  invocations: [{ from: 0, at: 1_000 }],
  ...partial,
});

/**
 * A delivery that held run 1 (at 100) and the next one that ran the tool again (at 200): a fault excuses
 * only a rerun another invocation made (tool-runs.ts, the fault excuse).
 */
const TWO_DELIVERIES: InvocationWindow[] = [
  { from: 0, at: 160 },
  { from: 190, at: 1_000 },
];

describe("the tools' runs, judged from the witness", () => {
  it("passes one run with one effect and one key", () => {
    const verdict = judgeToolRuns([job({})]);
    expect([verdict.runs, verdict.maxRuns, verdict.rerun]).toEqual([1, 1, 0]);
    expect([verdict.unexplained.count, verdict.wrongEffects.count, verdict.keyProblems.count]).toEqual([
      0, 0, 0,
    ]);
  });

  it("explains a second run by the downstream's failure, a cut-off answer, a fault after the run or a slow invocation, and nothing else", () => {
    const verdict = judgeToolRuns([
      job({ callId: "a", runs: [run(100, RunOutcome.Failed), run(200)] }),
      job({
        callId: "b",
        runs: [run(100, RunOutcome.Applied, { clientGone: true }), run(200, RunOutcome.Replayed)],
        // Cut off by its invocation's deadline (a slow one; its lease, 1,000 ms, did not end); the next
        // delivery ran it again.
        invocations: [
          { from: 90, at: 150 },
          { from: 190, at: 260 },
        ],
        incidents: [{ at: 150, from: 90, leaseMs: 1_000, cause: RunCause.SlowInvocation }],
      }),
      job({
        callId: "c",
        runs: [run(100), run(200, RunOutcome.Replayed)],
        incidents: [{ at: 150, cause: RunCause.FaultAfterRun }],
        // The fault in the invocation that held run 1; the next delivery ran it again.
        invocations: TWO_DELIVERIES,
      }),
      job({
        callId: "d",
        runs: [run(100), run(200, RunOutcome.Replayed)],
        incidents: [{ at: 150, from: 90, leaseMs: 50, cause: RunCause.SlowInvocation }],
      }),
      job({
        callId: "f",
        runs: [run(100), run(200, RunOutcome.Replayed)],
        incidents: [{ at: 150, cause: RunCause.EmulatorFailed }],
        // The fault in the invocation that held run 1; the next delivery ran it again.
        invocations: TWO_DELIVERIES,
      }),
      // A fault before the first run, and a slow invocation that began after it, explain nothing.
      job({
        callId: "e",
        runs: [run(100), run(200, RunOutcome.Replayed)],
        incidents: [
          { at: 50, cause: RunCause.FaultAfterRun },
          { at: 190, from: 150, leaseMs: 10, cause: RunCause.SlowInvocation },
        ],
      }),
    ]);
    expect(verdict.causes).toEqual({
      [RunCause.DownstreamFailed]: 1,
      [RunCause.AnswerCutOff]: 1,
      [RunCause.FaultAfterRun]: 1,
      [RunCause.EmulatorFailed]: 1,
      [RunCause.SlowInvocation]: 1,
    });
    expect(verdict.unexplained.names).toEqual(["e run 2"]);
    expect([verdict.maxRuns, verdict.rerun]).toEqual([2, 6]);
  });

  it("explains a second run by a fault only when it hit a request of the invocation that held the run before", () => {
    // A redelivery's own requests (its pre-read, its claim) come after the run's invocation ended: a fault on
    // them cannot have kept that run's outcome from being stored, so it does not excuse running the tool again.
    const later = { at: 150, cause: RunCause.FaultAfterRun } as const;
    const verdict = judgeToolRuns([
      job({
        callId: "fault-in-the-redelivery",
        runs: [run(100), run(200, RunOutcome.Replayed)],
        incidents: [later],
        invocations: [
          { from: 90, at: 120 },
          { from: 140, at: 210 },
        ],
      }),
      job({
        callId: "fault-in-the-run's-invocation",
        runs: [run(100), run(200, RunOutcome.Replayed)],
        incidents: [later],
        invocations: [
          { from: 90, at: 160 },
          { from: 170, at: 210 },
        ],
      }),
    ]);
    expect(verdict.unexplained.names).toEqual(["fault-in-the-redelivery run 2"]);
    expect(verdict.causes[RunCause.FaultAfterRun]).toBe(1);
  });

  it("explains a second run by a fault only when it came after the run before was answered", () => {
    // A fault while the tool still ran (on another delivery's pre-read, say) cannot have kept the run's
    // outcome from being stored: only a request made after its answer (storing the result) could.
    const verdict = judgeToolRuns([
      job({
        callId: "fault-while-the-tool-ran",
        runs: [run(100, RunOutcome.Applied, { answeredAt: 300 }), run(400, RunOutcome.Replayed)],
        incidents: [{ at: 150, cause: RunCause.FaultAfterRun }],
        invocations: [
          { from: 0, at: 350 },
          { from: 390, at: 1_000 },
        ],
      }),
      job({
        callId: "fault-after-the-answer",
        runs: [run(100, RunOutcome.Applied, { answeredAt: 300 }), run(400, RunOutcome.Replayed)],
        incidents: [{ at: 310, cause: RunCause.FaultAfterRun }],
        invocations: [
          { from: 0, at: 350 },
          { from: 390, at: 1_000 },
        ],
      }),
    ]);
    expect(verdict.unexplained.names).toEqual(["fault-while-the-tool-ran run 2"]);
    expect(verdict.causes[RunCause.FaultAfterRun]).toBe(1);
  });

  it("explains a second run by a slow invocation only when the run came after its claim's lease ended", () => {
    const verdict = judgeToolRuns([
      // Ran out of time (60 ms) and the second run came before the lease could end (500 ms): the claim held
      // every other delivery back.
      job({
        callId: "slow-but-within-the-lease",
        runs: [run(100), run(200, RunOutcome.Replayed)],
        incidents: [{ at: 150, from: 90, leaseMs: 500, cause: RunCause.SlowInvocation }],
      }),
      // Outlasted its lease, but the second run came while the lease still held.
      job({
        callId: "second-run-inside-the-lease",
        runs: [run(100), run(200, RunOutcome.Replayed)],
        incidents: [{ at: 700, from: 90, leaseMs: 500, cause: RunCause.SlowInvocation }],
        invocations: [{ from: 0, at: 1_000 }],
      }),
      job({
        callId: "lease-ended",
        runs: [run(100), run(650, RunOutcome.Replayed)],
        incidents: [{ at: 700, from: 90, leaseMs: 500, cause: RunCause.SlowInvocation }],
      }),
      // 100,000 events, seed 42 (fifo-42-3482): the invocation stopped in its deadline margin 2,805 ms after
      // its call, before its lease (2,850 ms) ended, the run answered and its outcome not stored; the next
      // delivery ran the tool 2,947 ms after that call, once the lease had ended.
      job({
        callId: "stopped-before-its-lease-ended",
        runs: [run(5_632), run(5_929, RunOutcome.Replayed)],
        incidents: [{ at: 5_787, from: 2_982, leaseMs: 2_850, cause: RunCause.SlowInvocation }],
        invocations: [
          { from: 2_982, at: 5_787 },
          { from: 5_847, at: 7_301 },
        ],
      }),
    ]);
    expect(verdict.unexplained.names).toEqual([
      "slow-but-within-the-lease run 2",
      "second-run-inside-the-lease run 2",
    ]);
    expect(verdict.causes[RunCause.SlowInvocation]).toBe(2);
  });

  it("never excuses a run that came after the job's outcome was stored", () => {
    // The DynamoDB door saw the call's item written completed at 150: a later delivery must find it and run
    // nothing, whatever befell the run before (here its client left, and its invocation ran out of time).
    const verdict = judgeToolRuns([
      job({
        callId: "stored-then-run-again",
        runs: [run(100, RunOutcome.Applied, { clientGone: true }), run(700, RunOutcome.Replayed)],
        incidents: [{ at: 650, from: 90, leaseMs: 500, cause: RunCause.SlowInvocation }],
        storedAt: 150,
      }),
      job({
        callId: "stored-after-the-run",
        runs: [run(100, RunOutcome.Applied, { clientGone: true }), run(200, RunOutcome.Replayed)],
        invocations: [
          { from: 90, at: 150 },
          { from: 190, at: 260 },
        ],
        incidents: [{ at: 150, from: 90, leaseMs: 1_000, cause: RunCause.SlowInvocation }],
        storedAt: 250,
      }),
    ]);
    expect(verdict.unexplained.names).toEqual(["stored-then-run-again run 2"]);
    expect(verdict.causes[RunCause.AnswerCutOff]).toBe(1);
  });

  it("counts effects against the job's outcome: one for a job, none for a refused one", () => {
    const verdict = judgeToolRuns([
      job({ callId: "twice", effects: [effect, { ...effect, effectId: "job-1#2" }] }),
      job({ callId: "none", effects: [] }),
      job({ callId: "refused", rejected: true, effects: [], runs: [run(1, RunOutcome.Rejected)] }),
      job({ callId: "refused-but-applied", rejected: true }),
    ]);
    expect(verdict.wrongEffects.names).toEqual([
      "twice: 2 effects, expected 1",
      "none: 0 effects, expected 1",
      "refused-but-applied: 1 effects, expected 0",
    ]);
  });

  it("wants one and the same idempotency key on every run", () => {
    const verdict = judgeToolRuns([
      job({
        callId: "two-keys",
        runs: [run(1, RunOutcome.Failed), run(2, RunOutcome.Applied, { key: "other" })],
      }),
      job({ callId: "no-key", runs: [run(1, RunOutcome.Applied, { key: undefined })] }),
    ]);
    expect(verdict.keyProblems.names).toEqual(["two-keys: keys k, other", "no-key: keys (none)"]);
  });

  it("takes a worker's lease as it takes it: up to its requests' cut-off, the timeout less half the margin, scaled", () => {
    // 30 s and 5,000 ms at ÷10: the timeout is 3,000 ms, the margin 500 ms, the requests' share of it 250 ms.
    expect(workerLeaseMs({ timeout_seconds: 30, deadline_margin_ms: 5_000 }, 10)).toBe(2_750);
    expect(workerLeaseMs({ timeout_seconds: 30, deadline_margin_ms: 5_000 }, 1)).toBe(27_500);
  });

  it("does not excuse a second run by a cut-off answer that no deadline, timeout or slow downstream explains", () => {
    // The witness answered in 5 ms, the invocation that held the run ended 20 ms later without running out
    // of time (no slow-invocation incident), and the fault plan did nothing to the job: the worker dropped
    // the answer by its own choice, and a worker that hangs up on its tool calls must not make its own cause.
    const verdict = judgeToolRuns([
      job({
        callId: "hung-up-on-its-own",
        runs: [run(100, RunOutcome.Applied, { clientGone: true }), run(200, RunOutcome.Replayed)],
        invocations: [
          { from: 90, at: 125 },
          { from: 190, at: 210 },
        ],
      }),
    ]);
    expect(verdict.unexplained.names).toEqual(["hung-up-on-its-own run 2"]);
  });

  it("excuses a cut-off run the witness read only after the slow invocation that sent it had ended", () => {
    // A sandbox stopped at its timeout had written its request; the busy harness read it 40 ms after the
    // invocation's end (100,000 events: up to 1,248 ms). The witness's loop, as busy, had last ticked at 50:
    // the request may have come from then on, so the invocation 30..60 may have sent it, and only that one.
    const lateRead = { clientGone: true, earliestAt: 50 };
    const verdict = judgeToolRuns([
      job({
        callId: "read-late",
        runs: [run(100, RunOutcome.Applied, lateRead), run(300, RunOutcome.Replayed)],
        invocations: [
          { from: 0, at: 20 },
          { from: 30, at: 60 },
          { from: 290, at: 320 },
        ],
        incidents: [{ at: 60, from: 30, leaseMs: 1_000, cause: RunCause.SlowInvocation }],
      }),
      job({
        // The same, but the slow invocation is an earlier one: the run's sender (30..60) was not slow.
        callId: "read-late-after-a-quick-one",
        runs: [run(100, RunOutcome.Applied, lateRead), run(300, RunOutcome.Replayed)],
        invocations: [
          { from: 0, at: 20 },
          { from: 30, at: 60 },
          { from: 290, at: 320 },
        ],
        incidents: [{ at: 20, from: 0, leaseMs: 1_000, cause: RunCause.SlowInvocation }],
      }),
    ]);
    expect(verdict.unexplained.names).toEqual(["read-late-after-a-quick-one run 2"]);
    expect(verdict.causes[RunCause.AnswerCutOff]).toBe(1);
  });

  it("a run that reached the witness after every invocation around it had ended is the last one's", () => {
    // 10,000 events under --cpu-prof (job-42-20, s38, after the arrival bound): the first invocation ran
    // out of time and its sandbox thread had exited at 4,156 ms; its request reached the witness only after
    // 4,216 (the witness's loop was responsive: it ticked then) and was read at 4,399, before the next
    // invocation began at 4,451. Loopback delivery itself lagged (the kernel's network processing is
    // deferred on a loaded machine), so the run's span meets no invocation; its sender is the last one that
    // ended before it, out of time, and the third invocation's run is excused as a cut-off answer's.
    const T = 1_796_674_625_310;
    const facts = (invocations: InvocationWindow[]): JobToJudge =>
      job({
        callId: "job-42-20",
        runs: [
          run(T + 4_399, RunOutcome.Applied, {
            earliestAt: T + 4_216,
            answeredAt: T + 4_473,
            clientGone: true,
          }),
          run(T + 22_904, RunOutcome.Replayed, { earliestAt: T + 22_890 }),
        ],
        invocations,
        incidents: [
          { at: T + 4_156, from: T, leaseMs: 2_850, cause: RunCause.SlowInvocation },
          { at: T + 8_610, from: T + 4_451, leaseMs: 2_850, cause: RunCause.SlowInvocation },
        ],
        storedAt: T + 22_988,
      });
    const lagged = judgeToolRuns([
      facts([
        { from: T, at: T + 4_156 },
        { from: T + 4_451, at: T + 8_610 },
        { from: T + 22_475, at: T + 23_577 },
      ]),
    ]);
    expect(lagged.unexplained.names).toEqual([]);
    expect(lagged.causes[RunCause.AnswerCutOff]).toBe(1);
    // A span that meets an invocation is that invocation's alone: the same run read while the second
    // invocation ran (it began at 4,300) and run again by that invocation is no cut-off answer of the first.
    const met = judgeToolRuns([
      {
        ...facts([
          { from: T, at: T + 4_156 },
          { from: T + 4_300, at: T + 23_577 },
        ]),
        callId: "job-42-20-met",
        incidents: [{ at: T + 4_156, from: T, leaseMs: 2_850, cause: RunCause.SlowInvocation }],
      },
    ]);
    expect(met.unexplained.names).toEqual(["job-42-20-met run 2"]);
  });

  it("a run the witness read after the next invocation began is still its sender's", () => {
    // 10,000 events under --cpu-prof (fifo-42-2, s38): the first invocation ran out of time and its sandbox
    // was stopped just after it sent run 1; the witness, on the harness's busy main thread, read that
    // request's head only 252 ms after the invocation ended and 46 ms after the next one began. The
    // witness's own loop shows it was starved: it had last ticked before the first invocation ended, so
    // the request may have arrived from then on (earliestAt). Run 1 may be either invocation's: the
    // second, also out of time, sent run 2 after the first's lease had ended.
    const T = 1_796_670_000_000;
    const facts = (run1EarliestAt: number): JobToJudge =>
      job({
        callId: "fifo-42-2",
        runs: [
          run(T + 628_071, RunOutcome.Applied, {
            earliestAt: T + run1EarliestAt,
            answeredAt: T + 628_159,
            clientGone: true,
          }),
          run(T + 630_760, RunOutcome.Replayed),
          run(T + 646_026, RunOutcome.Replayed),
        ],
        invocations: [
          { from: T + 623_702, at: T + 627_819 },
          { from: T + 628_025, at: T + 631_110 },
          { from: T + 645_916, at: T + 646_154 },
        ],
        incidents: [
          { at: T + 627_819, from: T + 623_702, leaseMs: 2_850, cause: RunCause.SlowInvocation },
          { at: T + 631_110, from: T + 628_025, leaseMs: 2_850, cause: RunCause.SlowInvocation },
        ],
        storedAt: T + 646_044,
      });
    const starved = judgeToolRuns([facts(627_760)]);
    expect(starved.unexplained.names).toEqual([]);
    expect([starved.causes[RunCause.AnswerCutOff], starved.causes[RunCause.SlowInvocation]]).toEqual([1, 1]);
    // The same stamps from a responsive witness (it ran 3 ms before it read run 1): run 1 came after the
    // second invocation began, only that one can have sent it, and it sent run 2 as well: its own hang-up
    // and run again, excused by nothing.
    const responsive = judgeToolRuns([{ ...facts(628_068), callId: "fifo-42-2-responsive" }]);
    expect(responsive.unexplained.names).toEqual(["fifo-42-2-responsive run 2"]);
  });

  it("judges a run read back without its arrival bound as before the bound: the last invocation started before it may have sent it", () => {
    // Diagnostics files written before the witness measured earliestAt: how late the harness read a run is
    // unknown there, and re-reading such a file must not change its verdicts.
    const unmeasured = { clientGone: true, earliestAt: undefined };
    const verdict = judgeToolRuns([
      job({
        callId: "read-late-unmeasured",
        runs: [run(100, RunOutcome.Applied, unmeasured), run(300, RunOutcome.Replayed)],
        invocations: [
          { from: 0, at: 20 },
          { from: 30, at: 60 },
          { from: 290, at: 320 },
        ],
        incidents: [{ at: 60, from: 30, leaseMs: 1_000, cause: RunCause.SlowInvocation }],
      }),
      // The same run measured by a responsive witness (sent from 97 on) while the next invocation ran: it
      // is that one's alone, no guess adds the slow one, and that one ran the tool again itself.
      job({
        callId: "read-on-time-measured",
        runs: [run(100, RunOutcome.Applied, { clientGone: true }), run(300, RunOutcome.Replayed)],
        invocations: [
          { from: 0, at: 20 },
          { from: 30, at: 60 },
          { from: 95, at: 320 },
        ],
        incidents: [{ at: 60, from: 30, leaseMs: 1_000, cause: RunCause.SlowInvocation }],
      }),
    ]);
    expect(verdict.unexplained.names).toEqual(["read-on-time-measured run 2"]);
    expect(verdict.causes[RunCause.AnswerCutOff]).toBe(1);
  });

  it("does not excuse a run that the invocation which ran out of time made itself, after its own lease or cut-off", () => {
    // A lease that ended lets another delivery run the tool; the invocation that held it can make no request
    // past its lease (its requests are cut off there, packages/worker process-jobs), and a worker runs a tool
    // once per job and invocation. A worker that runs the tool, sleeps past its lease and runs it again made
    // its own "slow invocation"; so did one that hangs up on its tool near its deadline and runs it again.
    // The three 100,000-event diagnostics files kept (seeds 42, 42 and 1: 599 reruns excused by a slow
    // invocation, 13 by a cut-off answer since 6f7d918) have none such: every rerun came from another.
    const verdict = judgeToolRuns([
      job({
        callId: "slept-past-its-lease-and-ran-again",
        runs: [run(100), run(2_900, RunOutcome.Replayed)],
        invocations: [{ from: 0, at: 3_000 }],
        incidents: [{ at: 3_000, from: 0, leaseMs: 2_850, cause: RunCause.SlowInvocation }],
      }),
      job({
        callId: "hung-up-near-its-deadline-and-ran-again",
        runs: [run(2_700, RunOutcome.Applied, { clientGone: true }), run(2_900, RunOutcome.Replayed)],
        invocations: [{ from: 0, at: 3_000 }],
        incidents: [{ at: 3_000, from: 0, leaseMs: 2_850, cause: RunCause.SlowInvocation }],
      }),
      // The same, but the second run came from the next delivery: the lease had ended, the claim with it.
      job({
        callId: "ran-again-by-the-next-delivery",
        runs: [run(100), run(3_100, RunOutcome.Replayed)],
        invocations: [
          { from: 0, at: 3_000 },
          { from: 3_050, at: 3_400 },
        ],
        incidents: [{ at: 3_000, from: 0, leaseMs: 2_850, cause: RunCause.SlowInvocation }],
      }),
    ]);
    expect(verdict.unexplained.names).toEqual([
      "slept-past-its-lease-and-ran-again run 2",
      "hung-up-near-its-deadline-and-ran-again run 2",
    ]);
    expect(verdict.causes[RunCause.SlowInvocation]).toBe(1);
  });
});

describe("the arrival bound, attacked (s38 review): excuses a product could earn by starving the witness", () => {
  // A product shares the harness's two cores: by burning CPU or flooding the witness with requests it can
  // keep the witness's loop from ticking, and so widen any run's [earliestAt, receivedAt]. Each case below
  // is a sabotaged product's behaviour under such a starved witness; the judge must excuse it only when a
  // correct product could have left the same facts.
  const slow = (from: number, at: number, leaseMs: number) =>
    ({ at, from, leaseMs, cause: RunCause.SlowInvocation }) as const;

  it("does not excuse a run after a slow invocation's lease by another invocation that ended before the lease did", () => {
    // The invocation 0..3,000 ran the tool at 100, ran out of time (lease at least 2,850 ms), and ran the
    // tool again itself at 2,840, before its lease ended: a worker that runs a job's tool twice. The job was
    // handed meanwhile to 2,700..2,800, which found the claim held and ran nothing. The witness, starved
    // from 2,790, read the second run at 2,900: its span meets both invocations. A correct product cannot
    // leave these facts: the slow one runs a job's tool once and makes no request past its lease, and the
    // other, ended at 2,800, could run the tool only once that lease (2,850 at the earliest) had ended.
    const facts = (other: InvocationWindow): JobToJudge =>
      job({
        runs: [run(100), run(2_900, RunOutcome.Replayed, { earliestAt: 2_790 })],
        invocations: [{ from: 0, at: 3_000 }, other],
        incidents: [slow(0, 3_000, 2_850)],
      });
    const verdict = judgeToolRuns([
      { ...facts({ from: 2_700, at: 2_800 }), callId: "ran-again-itself-before-its-lease-ended" },
      // The same stamps, but the other invocation ran on past the lease's end: it may have claimed the job
      // then and sent the run, as a correct product does.
      { ...facts({ from: 2_700, at: 2_880 }), callId: "another-ran-on-past-the-lease" },
    ]);
    expect(verdict.unexplained.names).toEqual(["ran-again-itself-before-its-lease-ended run 2"]);
    expect(verdict.causes[RunCause.SlowInvocation]).toBe(1);
  });

  it("still excuses a rerun the starved witness read after the next invocation began, though the slow one may have sent it", () => {
    // Sabotaged: the invocation 0..3,000 runs the tool again at 2,990, past its lease, and the witness,
    // starved from 2,985, reads it at 3,050, after the next delivery (3,010..3,400) began. A correct product
    // leaves the same facts (the next delivery claimed the job once the lease ended and ran the tool at
    // 3,010..3,050): indistinguishable, so it must stay excused.
    const verdict = judgeToolRuns([
      job({
        callId: "slow-one-ran-again-read-late",
        runs: [run(100), run(3_050, RunOutcome.Replayed, { earliestAt: 2_985 })],
        invocations: [
          { from: 0, at: 3_000 },
          { from: 3_010, at: 3_400 },
        ],
        incidents: [slow(0, 3_000, 2_850)],
      }),
    ]);
    expect(verdict.unexplained.names).toEqual([]);
    expect(verdict.causes[RunCause.SlowInvocation]).toBe(1);
  });

  it("excuses a cut-off run by any slow invocation that may have sent it, when another may have sent the rerun", () => {
    // Sabotaged: the slow invocation 1,005..3,000 sent run 1, hung up on it by its own choice and ran the
    // tool again at 1,500. The witness, starved from 990, read run 1 at 1,100, so the slow invocation
    // 0..1,000 (lease 950 ms) may have sent it too. A correct product leaves the same facts (0..1,000 sent
    // run 1 at its end, its deadline cut the client off, the next delivery ran it again after the lease):
    // indistinguishable, so `cutOffBy(...).find` taking the first slow candidate that works is right.
    const verdict = judgeToolRuns([
      job({
        callId: "cut-off-by-either-slow-one",
        runs: [
          run(1_100, RunOutcome.Applied, { earliestAt: 990, clientGone: true }),
          run(1_500, RunOutcome.Replayed),
        ],
        invocations: [
          { from: 0, at: 1_000 },
          { from: 1_005, at: 3_000 },
        ],
        incidents: [slow(0, 1_000, 950), slow(1_005, 3_000, 950)],
      }),
    ]);
    expect(verdict.unexplained.names).toEqual([]);
    expect(verdict.causes[RunCause.AnswerCutOff]).toBe(1);
  });

  it("excuses a rerun by a slow invocation the starved witness let count as the holder of the run before, though it may have sent it only after its lease", () => {
    // Sabotaged: the invocation 1,005..2,000 (not slow) ran the tool at 1,010 and again at 1,500. The
    // witness, starved from 990, read the first at 1,100, so its span meets the end of the previous
    // delivery 0..1,000, which ran out of time (lease 950 ms). Before the bound that one, ended before the
    // read, held nothing and the rerun was unexplained; now it "held" run 1 and its lease explains run 2. A
    // correct product leaves these facts only if 0..1,000 sent run 1 at 990..1,000, past its lease: its
    // requests are cut off there by a timer in its own sandbox, which runs late when that thread is starved
    // as the witness's was. Indistinguishable while that timer can be late, so it stays excused; a rule that
    // wants the holder's lease to meet the run's span would need a bound on that lateness.
    const verdict = judgeToolRuns([
      job({
        callId: "ran-twice-after-a-slow-one-read-late",
        runs: [run(1_100, RunOutcome.Applied, { earliestAt: 990 }), run(1_500, RunOutcome.Replayed)],
        invocations: [
          { from: 0, at: 1_000 },
          { from: 1_005, at: 2_000 },
        ],
        incidents: [slow(0, 1_000, 950)],
      }),
    ]);
    expect(verdict.unexplained.names).toEqual([]);
    expect(verdict.causes[RunCause.SlowInvocation]).toBe(1);
  });

  it("does not count a fault inside an invocation that ended before the run before was read, however starved the witness", () => {
    // The bound adds to `holders` invocations that ended inside the run's span, before the witness read it.
    // A fault there came before the run was answered (answeredAt >= receivedAt), so it cannot have kept
    // the run's outcome from being stored, and the fault rule's "after the answer" keeps it out. Sabotaged:
    // 1,005..2,000 ran the tool twice; the earlier delivery 0..1,000 met a door fault at 995.
    const verdict = judgeToolRuns([
      job({
        callId: "fault-in-an-earlier-invocation",
        runs: [
          run(1_100, RunOutcome.Applied, { earliestAt: 990, answeredAt: 1_105 }),
          run(1_500, RunOutcome.Replayed),
        ],
        invocations: [
          { from: 0, at: 1_000 },
          { from: 1_005, at: 2_000 },
        ],
        incidents: [{ at: 995, cause: RunCause.FaultAfterRun }],
      }),
    ]);
    expect(verdict.unexplained.names).toEqual(["fault-in-an-earlier-invocation run 2"]);
  });
});

describe("the sender of each run, from the sandboxes' records of the requests they sent", () => {
  const slow = (from: number, at: number, leaseMs: number) =>
    ({ at, from, leaseMs, cause: RunCause.SlowInvocation }) as const;

  it("does not excuse a rerun by a fault in a later invocation that the starved witness let count as a holder of the run before", () => {
    // Sabotaged: the invocation 0..430 ran the tool (sent at 280; the witness, starved from 285, read it
    // at 420) and stored its outcome... or not: the redelivery 400..600 met a fault on its own request at
    // 440 and ran the tool again at 495. By the times alone, run 1's span meets 400..600, which then
    // counts as its holder and the fault there excuses run 2. The sandboxes' records say 0..430 sent
    // run 1: a fault in 400..600 cannot have kept its outcome from being stored.
    const verdict = judgeToolRuns([
      job({
        callId: "fault-in-a-redelivery-read-late",
        runs: [
          run(420, RunOutcome.Applied, { earliestAt: 285, answeredAt: 425 }),
          run(500, RunOutcome.Replayed),
        ],
        invocations: [
          { from: 0, at: 430, sent: [{ at: 280, key: "k" }] },
          { from: 400, at: 600, sent: [{ at: 495, key: "k" }] },
        ],
        incidents: [{ at: 440, cause: RunCause.FaultAfterRun }],
      }),
      // The same, the fault on the request of the invocation that sent run 1 (storing its result): excused.
      job({
        callId: "fault-in-the-sender",
        runs: [
          run(420, RunOutcome.Applied, { earliestAt: 285, answeredAt: 425 }),
          run(500, RunOutcome.Replayed),
        ],
        invocations: [
          { from: 0, at: 430, sent: [{ at: 280, key: "k" }] },
          { from: 400, at: 600, sent: [{ at: 495, key: "k" }] },
        ],
        incidents: [{ at: 428, cause: RunCause.FaultAfterRun }],
      }),
    ]);
    expect(verdict.unexplained.names).toEqual(["fault-in-a-redelivery-read-late run 2"]);
    expect(verdict.causes[RunCause.FaultAfterRun]).toBe(1);
    expect(verdict.senders).toEqual({ recorded: 4, ambiguous: 0, inferred: 0 });
  });

  it("does not excuse a rerun by a slow invocation that did not send the run before", () => {
    // The case "the arrival bound, attacked" has to excuse without records (1,005..2,000 ran the tool twice,
    // the starved witness let 0..1,000, slow, count as run 1's holder): the records say who sent run 1.
    const verdict = judgeToolRuns([
      job({
        callId: "ran-twice-after-a-slow-one",
        runs: [run(1_100, RunOutcome.Applied, { earliestAt: 990 }), run(1_500, RunOutcome.Replayed)],
        invocations: [
          { from: 0, at: 1_000, sent: [] },
          {
            from: 1_005,
            at: 2_000,
            sent: [
              { at: 1_010, key: "k" },
              { at: 1_495, key: "k" },
            ],
          },
        ],
        incidents: [slow(0, 1_000, 950)],
      }),
      // A correct product's: 0..1,000 sent run 1, ran out of time; 1,005..2,000 ran it again after the lease.
      job({
        callId: "rerun-after-the-sender's-lease",
        runs: [run(1_100, RunOutcome.Applied, { earliestAt: 990 }), run(1_500, RunOutcome.Replayed)],
        invocations: [
          { from: 0, at: 1_000, sent: [{ at: 980, key: "k" }] },
          { from: 1_005, at: 2_000, sent: [{ at: 1_495, key: "k" }] },
        ],
        incidents: [slow(0, 1_000, 950)],
      }),
    ]);
    expect(verdict.unexplained.names).toEqual(["ran-twice-after-a-slow-one run 2"]);
    expect(verdict.causes[RunCause.SlowInvocation]).toBe(1);
  });

  it("catches an invocation that ran the tool twice when a late read lets each run alone be any request", () => {
    // 0..1,000 sent run 1 at 900 and ran out of time (lease 950); 1,005..2,000 ran the tool twice (1,010
    // and 1,020: a worker runs a job's tool once per invocation). Loopback lag (115 ms) had the witness read
    // run 1 at 1,015, after 1,005..2,000's first request: runs 1 and 2 can each be either of the first two
    // requests, run 3 only the last. Both pairings leave a rerun without a cause: run 1 0..1,000's, then
    // runs 2 and 3 are both 1,005..2,000's (no cause between them); run 1 1,005..2,000's, then run 2 follows
    // a run of an invocation that was not slow. The judge takes each run's senders alone (the union over
    // pairings) and excuses both reruns by 0..1,000's slowness.
    const verdict = judgeToolRuns([
      job({
        callId: "ran-twice-read-late",
        runs: [
          run(1_015, RunOutcome.Applied, { earliestAt: 1_012 }),
          run(1_016, RunOutcome.Replayed, { earliestAt: 1_012 }),
          run(1_025, RunOutcome.Replayed, { earliestAt: 1_022 }),
        ],
        invocations: [
          { from: 0, at: 1_000, sent: [{ at: 900, key: "k" }] },
          {
            from: 1_005,
            at: 2_000,
            sent: [
              { at: 1_010, key: "k" },
              { at: 1_020, key: "k" },
            ],
          },
        ],
        incidents: [slow(0, 1_000, 950)],
      }),
    ]);
    expect(verdict.unexplained.count).toBeGreaterThanOrEqual(1);
  });

  it("does not excuse by a fault a rerun that the same invocation's sandbox recorded sending as the run before", () => {
    // One invocation, 0..1,000, sent both runs (its sandbox recorded both requests): a fault on its request
    // at 200 (storing the outcome) and it ran the tool again at 300 itself. A worker runs a job's tool once
    // per invocation, its retries are SQS's (tool-runs.ts `sentByAnother`): a run only it can have sent is
    // one it chose to make, as the slow-invocation excuse already holds.
    const verdict = judgeToolRuns([
      job({
        callId: "reran-itself-after-a-fault",
        runs: [run(105), run(305, RunOutcome.Replayed)],
        invocations: [
          {
            from: 0,
            at: 1_000,
            sent: [
              { at: 100, key: "k" },
              { at: 300, key: "k" },
            ],
          },
        ],
        incidents: [{ at: 200, cause: RunCause.FaultAfterRun }],
      }),
    ]);
    expect(verdict.unexplained.names).toEqual(["reran-itself-after-a-fault run 2"]);
  });

  it("does not take as a run's sender, when the records miss a request, an invocation whose sandbox recorded sending nothing for the job", () => {
    // "ran-twice-after-a-slow-one" above, but 1,005..1,400 left its second run to code still running after
    // it answered (sent at 1,495, while its sandbox was idle: the sandbox records it as no invocation's, the
    // observer drops it). One request recorded for two runs: both runs fall back to the times, and the
    // starved witness's span of run 1 meets 0..1,000, slow, which the records say sent nothing for the job.
    // Its slowness then excuses run 2, the rerun the strict rule catches when the request is recorded.
    const verdict = judgeToolRuns([
      job({
        callId: "ran-twice-second-left-running",
        runs: [
          run(1_100, RunOutcome.Applied, { earliestAt: 990 }),
          run(1_500, RunOutcome.Replayed, { earliestAt: 1_497 }),
        ],
        invocations: [
          { from: 0, at: 1_000, sent: [] },
          { from: 1_005, at: 1_400, sent: [{ at: 1_010, key: "k" }] },
        ],
        incidents: [slow(0, 1_000, 950)],
      }),
    ]);
    expect(verdict.unexplained.names).toEqual(["ran-twice-second-left-running run 2"]);
  });

  it("pairs runs with requests by key and time, names every invocation a run can be paired with, and infers only the runs no request pairs with", () => {
    const senders = runSenders(
      job({
        runs: [
          run(100),
          // A starved witness read both after both invocations had sent one: either can be either.
          run(3_050, RunOutcome.Replayed, { earliestAt: 2_985 }),
          run(3_060, RunOutcome.Replayed, { earliestAt: 2_985 }),
          // A key no record carries (a request the sandbox did not see): inferred from the times.
          run(3_500, RunOutcome.Applied, { key: "other" }),
        ],
        invocations: [
          {
            from: 0,
            at: 3_000,
            sent: [
              { at: 98, key: "k" },
              { at: 2_990, key: "k" },
            ],
          },
          { from: 3_010, at: 3_600, sent: [{ at: 3_020, key: "k" }] },
        ],
      }),
    );
    expect(senders).toEqual([
      { invocations: [0], known: "recorded" },
      { invocations: [0, 1], known: "recorded" },
      { invocations: [0, 1], known: "recorded" },
      { invocations: [1], known: "inferred" },
    ]);
  });

  it("takes no request as a run the witness read before it was sent, and infers the senders of runs that outnumber their requests", () => {
    const senders = runSenders(
      job({
        runs: [run(100), run(200, RunOutcome.Replayed)],
        invocations: [
          { from: 0, at: 150, sent: [{ at: 90, key: "k" }] },
          // Sent after run 2 was read: it cannot be run 2.
          { from: 160, at: 300, sent: [{ at: 250, key: "k" }] },
        ],
      }),
    );
    // One request for two runs: either run may be the one the records missed, so the times place both.
    expect(senders).toEqual([
      { invocations: [0], known: "inferred" },
      { invocations: [1], known: "inferred" },
    ]);
  });
});
