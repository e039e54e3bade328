import { describe, expect, it } from "vitest";
import { buildPlan, type ChaosOptions, DEFAULT_RATES } from "../../src/plan.js";
import { faultsExercised, recoveryUnderFaults } from "../../src/run.js";

const options: ChaosOptions = {
  events: 400,
  jobs: 40,
  fifoJobs: 20,
  sessions: 6,
  seed: 7,
  chunk: 50,
  sqsOutageMs: 500,
  rates: { ...DEFAULT_RATES, stuck: 0.02, stuckTwice: 0.5 },
};
const none = Object.fromEntries(Object.keys(DEFAULT_RATES).map((k) => [k, 0])) as Record<
  keyof typeof DEFAULT_RATES,
  number
>;

describe("the run's own conditions (the harness did what it claims)", () => {
  it("fails a run where a fault kind the plan asked for never happened, and names it", () => {
    const plan = buildPlan(options);
    const happened = Object.fromEntries(Object.keys(DEFAULT_RATES).map((k) => [k, 1])) as typeof none;
    expect(faultsExercised(plan, happened).pass).toBe(true);
    expect(faultsExercised(plan, { ...happened, s3: 0, stuckTwice: 0 })).toMatchObject({
      pass: false,
      detail: "never happened: stuckTwice, s3 (a longer run or a higher rate)",
    });
    // A kind the plan did not ask for is not missing.
    expect(faultsExercised(buildPlan({ ...options, rates: { ...DEFAULT_RATES, ...none } }), none).pass).toBe(
      true,
    );
  });

  it("fails a recovery without faults, or without a record given up again when the plan stuck one through its first replay", () => {
    const plan = buildPlan(options);
    expect(plan.scenario.stream.some((s) => s.kind === "stuck" && s.releasedAtRound === 2)).toBe(true);
    expect(recoveryUnderFaults(plan, 12, 3, 2).pass).toBe(true);
    expect(recoveryUnderFaults(plan, 0, 3, 2)).toMatchObject({
      pass: false,
      detail: "no fault during the replay",
    });
    expect(recoveryUnderFaults(plan, 12, 0, 2)).toMatchObject({
      pass: false,
      detail: "no record given up again after its replay",
    });
    // A plan without request or invocation faults asks for none during the replay either.
    const quiet = buildPlan({ ...options, rates: { ...none } });
    expect(recoveryUnderFaults(quiet, 0, 0, 1).pass).toBe(true);
  });
});
