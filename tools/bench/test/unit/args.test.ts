import { describe, expect, it } from "vitest";
import { BenchArgumentError, parseBenchArgs, selectParts } from "../../src/lib/args.ts";

const PARTS = ["batch", "peers", "cold-start"];

describe("parseBenchArgs", () => {
  it("runs every part without options", () => {
    expect(parseBenchArgs([], PARTS)).toEqual({
      ok: true,
      value: { only: undefined, quick: false, help: false },
    });
  });

  it("takes --only as a comma-separated list or repeated, in the orchestrator's order", () => {
    const parsed = parseBenchArgs(["--only", "cold-start,batch", "--only=peers", "--quick"], PARTS);
    expect(parsed).toEqual({
      ok: true,
      value: { only: ["batch", "peers", "cold-start"], quick: true, help: false },
    });
  });

  it.each([
    [["--only", "nope"], /unknown part "nope"/],
    [["--only", "batch,,peers"], /empty one/],
    [["--only"], /argument missing/],
    [["--fast"], /Unknown option '--fast'/],
    [["batch"], /positional argument/],
    [["--quick=yes"], /does not take an argument/],
  ])("refuses %j with a clear message", (argv, message) => {
    const parsed = parseBenchArgs(argv, PARTS);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error).toBeInstanceOf(BenchArgumentError);
    expect(parsed.error.message).toMatch(message);
  });
});

describe("selectParts", () => {
  const parts = [{ name: "batch" }, { name: "chaos-scale", onlyWhenNamed: true }, { name: "chaos" }];

  it("leaves a part that runs only when named out of a run without --only", () => {
    expect(selectParts(parts, undefined).map((p) => p.name)).toEqual(["batch", "chaos"]);
  });

  it("runs it when --only names it, in the orchestrator's order", () => {
    expect(selectParts(parts, ["chaos", "chaos-scale"]).map((p) => p.name)).toEqual(["chaos-scale", "chaos"]);
  });
});
