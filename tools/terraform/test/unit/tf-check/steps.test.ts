// The closing note of tf:check: every step's time, as a table per root.
import { afterEach, describe, expect, it, vi } from "vitest";
import { CHECK, Steps, stepName, stepTable } from "../../../src/tf-check/steps.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

const step = (lane: string, name: string, start: number, seconds: number, ok = true) => ({
  lane,
  step: name,
  start,
  seconds,
  ok,
});

describe("stepTable", () => {
  it("puts the roots' steps in columns, in the order the steps first started, and the rest below", () => {
    const table = stepTable(
      [
        step(CHECK, "terraform fmt -check -recursive", 0, 0.4),
        step("dev", "init", 1, 2),
        step("bootstrap", "init", 1.5, 3),
        step("dev", "plan", 3, 10),
        step("module tests", "queue", 1, 20),
        step("bootstrap", "plan", 4.5, 8, false),
      ],
      ["dev", "prod", "bootstrap"],
      21.25,
    );
    const lines = table.split("\n");
    expect(lines[0]).toBe("step times in seconds, per root (the roots run side by side):");
    expect(lines[1]?.split(/\s{2,}/).filter(Boolean)).toEqual(["step", "dev", "prod", "bootstrap"]);
    expect(lines[2]?.split(/\s{2,}/).filter(Boolean)).toEqual(["init", "2.0", "-", "3.0"]);
    expect(lines[3]?.split(/\s{2,}/).filter(Boolean)).toEqual(["plan", "10.0", "-", "8.0 FAILED"]);
    // dev from 1 s to 13 s; bootstrap from 1.5 s to 12.5 s; prod ran nothing.
    expect(lines[4]?.split(/\s{2,}/).filter(Boolean)).toEqual(["lane, start to end", "12.0", "-", "11.0"]);
    expect(table).toContain("other steps (in the order they ended):");
    expect(table).toMatch(/terraform fmt -check -recursive\s+0\.4 s\n/);
    expect(table).toMatch(/module tests: queue\s+20\.0 s\n/);
    expect(table).toMatch(/module tests lane, start to end\s+20\.0 s\n/);
    expect(table).toMatch(/sum of the steps\s+43\.4 s\n/);
    expect(table).toMatch(/wall clock \(lanes overlap\)\s+21\.3 s$/);
    // Every row of the table is as wide as its header: the columns line up.
    const widths = new Set(lines.slice(1, 5).map((l) => l.length));
    expect(widths.size).toBe(1);
  });
});

describe("Steps", () => {
  it("records each step's lane, start and time, failed ones too, and prints each as it ends", async () => {
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    let now = 1000;
    const steps = new Steps(() => now);
    now = 3000;
    await steps.run("dev", "init", async () => {
      now = 4500;
    });
    await expect(
      steps.run(CHECK, "fmt", async () => {
        now = 5000;
        throw new Error("not formatted");
      }),
    ).rejects.toThrow("not formatted");
    expect(steps.times).toEqual([
      { lane: "dev", step: "init", start: 2, seconds: 1.5, ok: true },
      { lane: CHECK, step: "fmt", start: 3.5, seconds: 0.5, ok: false },
    ]);
    expect(steps.elapsed()).toBe(4);
    expect(process.stdout.write).toHaveBeenCalledWith("    done: dev: init in 1.5 s\n");
    expect(process.stdout.write).toHaveBeenCalledWith("    FAILED: fmt in 0.5 s\n");
  });

  it("names the steps before the lanes without a lane", () => {
    expect(stepName(CHECK, "moto (.ci/moto.sh)")).toBe("moto (.ci/moto.sh)");
    expect(stepName("prod", "apply")).toBe("prod: apply");
  });
});
