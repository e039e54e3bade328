import { captureStreams } from "@mcp-pipeline/emulators/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { main } from "../../src/index.js";

afterEach(() => vi.restoreAllMocks());

async function run(argv: string[], env: Record<string, string> = {}) {
  const { result: code, out, err } = await captureStreams(() => main(argv, env));
  return { code, err, out };
}

describe("npm run recover: bad command lines get a clear error and exit code 2", () => {
  it.each([
    [[], "no command: triage, status, inspect, show, replay, peek or redrive"],
    [["frobnicate"], 'unknown command "frobnicate"'],
    [["inspect", "--nope"], "Unknown option '--nope'"],
    [["inspect"], "no quarantine bucket"],
    [["inspect", "--bucket", "b", "--since", "yesterday"], "--since must be an ISO instant"],
    // Date.parse reads a time without a zone in the machine's zone: another zone's laptop selects other records.
    [
      ["inspect", "--bucket", "b", "--since", "2026-11-30T10:00:00"],
      '--since "2026-11-30T10:00:00" has no zone, and would be read in this machine\'s: add Z for UTC or an offset',
    ],
    [
      ["replay", "--bucket", "b", "--stream", "s", "--until", "2026-11-30T10:00"],
      '--until "2026-11-30T10:00" has no zone',
    ],
    // Date.parse rolls February 30 over to March 2.
    [
      ["inspect", "--bucket", "b", "--since", "2026-02-30T10:00:00Z"],
      '--since "2026-02-30T10:00:00Z" is not a date of the calendar',
    ],
    [["inspect", "--bucket", "b", "--since", "2026-11-30 10:00:00Z"], "--since must be an ISO instant"],
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
    [["redrive"], "redrive needs --queue NAME (tool-jobs, session-jobs, stream-failures) or --from DLQ"],
    [["peek", "--queue", "tool-jobs", "--from", "x"], "peek takes --queue or --from, not both"],
    [["redrive", "--from", "tool-jobs-dlq"], '--from must be an SQS queue URL or ARN, got "tool-jobs-dlq"'],
    [
      ["redrive", "--from", "arn:aws:sqs:eu-west-1:1:q", "--to", "arn:aws:s3:::bucket"],
      "--to must be an SQS queue URL or ARN",
    ],
    [
      ["redrive", "--queue", "tool-jobs", "--max", "2", "--mode", "move-task"],
      "--max and --reason need the mover",
    ],
    [["redrive", "--queue", "tool-jobs", "--watch", "-1"], "--watch must be between 0 and 3600, got -1"],
    // A message move task takes at most 500 a second (§4): a higher --rate was cut to 500 without a word.
    [
      ["redrive", "--queue", "tool-jobs", "--rate", "1000", "--mode", "move-task"],
      "--rate 1000 is over 500, the most a message move task moves a second (MaxNumberOfMessagesPerSecond): pass --rate 500 or less, or --mode mover",
    ],
    [
      ["redrive", "--queue", "tool-jobs", "--rate", "501"],
      "--rate 501 is over 500, the most a message move task moves a second",
    ],
    [
      ["replay", "--max", "0", "--bucket", "b", "--stream", "s"],
      "--max must be between 1 and 10000000, got 0",
    ],
    [
      ["inspect", "--bucket", "b", "--since", "2026-12-01T00:00:00Z", "--until", "2026-11-30T00:00:00Z"],
      "--since (2026-12-01T00:00:00Z) is not before --until (2026-11-30T00:00:00Z): the range holds nothing",
    ],
    [["inspect", "--include-permanent"], "--include-permanent is for replay, not inspect"],
    [["status", "--rate", "5"], "--rate is for replay, redrive, not status"],
    [["status", "--stuck-after", "0"], "--stuck-after must be between 1 and 1209600, got 0"],
    [["show", "a", "b", "--bucket", "q"], 'unexpected argument "b"'],
    [["triage", "extra"], 'unexpected argument "extra"'],
    [["inspect", "--bucket", "b"], "no region: set AWS_REGION"],
    [["redrive", "--queue", "nope"], "--queue must be one of tool-jobs, session-jobs, stream-failures"],
    [
      ["redrive", "--from", "a", "--to", "b", "--mode", "teleport"],
      "--mode must be auto, move-task or mover",
    ],
  ])("%j", async (argv, message) => {
    // Every region but the last case's: a bad command line is named before a missing region.
    const { code, err, out } = await run(
      argv,
      message.startsWith("no region") ? {} : { AWS_REGION: "eu-west-1" },
    );
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
