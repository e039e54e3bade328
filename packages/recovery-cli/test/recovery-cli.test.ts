import { captureStreams } from "@mcp-pipeline/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { main } from "../src/index.js";

afterEach(() => vi.restoreAllMocks());

async function run(argv: string[], env: Record<string, string> = {}) {
  const { result: code, out, err } = await captureStreams(() => main(argv, env));
  return { code, err, out };
}

describe("npm run recover: bad command lines get a clear error and exit code 2", () => {
  it.each([
    [[], ""],
    [["frobnicate"], 'unknown command "frobnicate"'],
    [["inspect", "--nope"], "Unknown option '--nope'"],
    [["inspect"], "no quarantine bucket"],
    [["inspect", "--bucket", "b", "--since", "yesterday"], "--since must be an ISO instant"],
    [["replay", "--bucket", "b"], "no stream"],
    [
      ["replay", "--bucket", "b", "--stream", "s", "--rate", "0"],
      "--rate must be between 1 and 10000, got 0",
    ],
    [
      ["replay", "--bucket", "b", "--stream", "s", "--rate", "-5"],
      "--rate must be between 1 and 10000, got -5",
    ],
    [
      ["replay", "--bucket", "b", "--stream", "s", "--rate", "1.5"],
      '--rate must be a whole number, got "1.5"',
    ],
    [["show", "--bucket", "b"], "show needs the object key"],
    [["redrive"], "redrive needs --from and --to"],
    [["redrive", "--queue", "nope"], "--queue must be one of tool-jobs, session-jobs, stream-failures"],
    [
      ["redrive", "--from", "a", "--to", "b", "--mode", "teleport"],
      "--mode must be auto, move-task or mover",
    ],
  ])("%j", async (argv, message) => {
    const { code, err, out } = await run(argv);
    expect(code).toBe(2);
    expect(err + out).toContain(message);
    // The message, then the usage.
    expect(err + out).toContain("npm run recover -- <command> [options]");
  });

  it("--help prints the usage and exits 0", async () => {
    const { code, out } = await run(["--help"]);
    expect(code).toBe(0);
    expect(out).toContain("npm run recover -- <command>");
  });
});
