import { describe, expect, it } from "vitest";
import { runLanes } from "../../../src/tf-check/lanes.ts";

/** A lane that finishes when the test releases it, recording how many lanes ran at once. */
function gate() {
  let release: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { done, release: () => release() };
}

describe("runLanes", () => {
  it("runs at most `jobs` lanes at a time and every lane to its end", async () => {
    const gates = [gate(), gate(), gate()];
    let running = 0;
    let most = 0;
    const started: string[] = [];
    const lanes = gates.map((g, i) => ({
      name: `lane ${i}`,
      run: async () => {
        started.push(`lane ${i}`);
        running++;
        most = Math.max(most, running);
        await g.done;
        running--;
        return i;
      },
    }));
    const outcome = runLanes(lanes, 2);
    await Promise.resolve();
    expect(started).toEqual(["lane 0", "lane 1"]);
    gates[1]?.release();
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(["lane 0", "lane 1", "lane 2"]);
    gates[0]?.release();
    gates[2]?.release();
    expect(await outcome).toEqual([
      { name: "lane 0", ok: true, value: 0 },
      { name: "lane 1", ok: true, value: 1 },
      { name: "lane 2", ok: true, value: 2 },
    ]);
    expect(most).toBe(2);
  });

  it("a failing lane does not stop the others; its error comes back in its place", async () => {
    const failure = new Error("apply failed");
    const outcomes = await runLanes(
      [
        { name: "dev", run: () => Promise.reject(failure) },
        { name: "prod", run: () => Promise.resolve("passed") },
      ],
      1,
    );
    expect(outcomes).toEqual([
      { name: "dev", ok: false, error: failure },
      { name: "prod", ok: true, value: "passed" },
    ]);
  });

  it("refuses a number of jobs that is not a positive integer", async () => {
    await expect(runLanes([], 0)).rejects.toThrow(RangeError);
    await expect(runLanes([], 1.5)).rejects.toThrow("jobs must be a positive integer, not 1.5");
  });
});
