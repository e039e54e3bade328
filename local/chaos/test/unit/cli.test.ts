import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UsageError } from "@mcp-pipeline/cli";
import { captureStreams } from "@mcp-pipeline/emulators/testing";
import { describe, expect, it } from "vitest";
import { main, parseCli, prepareDiagnosticsFile, USAGE } from "../../src/cli.js";
import { DEFAULT_RATES } from "../../src/plan.js";

describe("npm run chaos: the command line", () => {
  it("takes its defaults from the event count and DEFAULT_RATES", () => {
    const options = parseCli([]);
    expect(options.chaos).toMatchObject({
      events: 1000,
      jobs: 100,
      fifoJobs: 50,
      sessions: 20,
      seed: 42,
      chunk: 84,
    });
    expect(options.chaos.rates).toEqual(DEFAULT_RATES);
    expect(options).toMatchObject({
      env: "dev",
      timeScale: 10,
      timeoutMs: 600_000,
      stallTimeoutMs: 300_000,
      json: false,
      help: false,
      partialSplitAccounting: "split-free",
    });
  });

  it("reads every option", () => {
    const options = parseCli([
      ...["--events", "100000", "--jobs", "7", "--fifo-jobs", "3", "--sessions", "9", "--seed", "7"],
      ...["--chunk", "500", "--sqs-outage", "0", "--throttle-rate", "0.5", "--s3-rate", "0"],
      ...["--env", "prod", "--time-scale", "5", "--timeout", "60", "--stall-timeout", "30"],
      ...["--dist", "out", "--json", "--partial-split-accounting", "counts-attempt"],
    ]);
    expect(options.chaos).toMatchObject({
      events: 100_000,
      jobs: 7,
      fifoJobs: 3,
      sessions: 9,
      seed: 7,
      chunk: 500,
    });
    expect(options.chaos.rates).toMatchObject({ throttle: 0.5, s3: 0, poison: DEFAULT_RATES.poison });
    expect(options).toMatchObject({
      env: "prod",
      timeScale: 5,
      timeoutMs: 60_000,
      stallTimeoutMs: 30_000,
      distDir: "out",
      json: true,
      partialSplitAccounting: "counts-attempt",
    });
  });

  it("reads --explain, --diagnostics and --from; none of them by default", () => {
    expect(parseCli([])).toMatchObject({ explain: undefined, diagnosticsFile: undefined, from: undefined });
    expect(parseCli(["--explain", "job-7-335", "--diagnostics", "out.json"])).toMatchObject({
      explain: "job-7-335",
      diagnosticsFile: "out.json",
      from: undefined,
    });
    expect(parseCli(["--explain", "fifo-3-12", "--from", "out.json"])).toMatchObject({
      explain: "fifo-3-12",
      from: "out.json",
    });
  });

  it("takes --json from npm's own flag (npm run chaos --json)", () => {
    expect(parseCli([], { npm_config_json: "true" }).json).toBe(true);
  });

  it.each([
    [["--events", "0"], "--events must be between 1 and 100000, got 0"],
    [["--events", "100001"], "--events must be between 1 and 100000, got 100001"],
    [["--events", "-5"], "--events must be between 1 and 100000, got -5"],
    [["--events", "1e3"], "--events must be a whole number"],
    [["--events"], "Option '--events <value>' argument missing"],
    [["--jobs", "x"], "--jobs must be a whole number"],
    [["--sessions", "0"], "--sessions must be between 1"],
    [["--seed", "4294967296"], "--seed must be between 0 and 4294967295"],
    [["--chunk", "0"], "--chunk must be between 1"],
    [["--sqs-outage", "-1"], "--sqs-outage must be between 0"],
    [["--throttle-rate", "1.5"], "--throttle-rate must be a number from 0 to 1"],
    [["--dynamodb-after-write-rate", "abc"], "--dynamodb-after-write-rate must be a number from 0 to 1"],
    [["--s3-rate", ""], "--s3-rate must be a number from 0 to 1"],
    [["--time-scale", "0"], "--time-scale must be between 1"],
    [["--timeout", "0"], "--timeout must be between 1"],
    [["--stall-timeout", "0"], "--stall-timeout must be between 1"],
    [["--stall-timeout", "5m"], "--stall-timeout must be a whole number"],
    [["--env", "../prod"], "--env must name an environment"],
    [["--dist="], "--dist needs a directory"],
    [["--frobnicate"], "Unknown option '--frobnicate'"],
    [
      ["--explain", "7-335"],
      '--explain needs a job\'s call id (job-<seed>-<n> or fifo-<seed>-<n>), got "7-335"',
    ],
    [["--explain", "call-7-1"], "--explain needs a job's call id"],
    [["--explain="], "--explain needs a job's call id"],
    [["--explain"], "Option '--explain <value>' argument missing"],
    [["--diagnostics="], "--diagnostics needs a file"],
    [["--timeline="], "--timeline needs a file"],
    [["--from", "d.json"], "--from reads a diagnostics file for --explain: name the job with --explain"],
    [["--from="], "--from needs a file"],
    [
      ["--explain", "job-7-335", "--from", "d.json", "--diagnostics", "e.json"],
      "--from runs nothing, so there are no diagnostics to write: drop --diagnostics",
    ],
    [["stray"], "Unexpected argument 'stray'"],
    [
      ["--partial-split-accounting", "free"],
      '--partial-split-accounting must be one of split-free, counts-attempt, got "free"',
    ],
  ])("refuses %j: %s", (argv, message) => {
    expect(() => parseCli(argv)).toThrow(UsageError);
    expect(() => parseCli(argv)).toThrow(message);
  });

  it("prints the usage with --help and exits 0", async () => {
    const { result, out } = await captureStreams(() => main(["--help"]));
    expect(result).toBe(0);
    expect(out).toBe(`${USAGE}\n`);
  });

  it("says what is wrong, then the usage, on stderr, and exits 2, starting nothing", async () => {
    const { result, out, err } = await captureStreams(() => main(["--events", "abc"]));
    expect(result).toBe(2);
    expect(out).toBe("");
    expect(err).toBe(`--events must be a whole number, got "abc"\n\n${USAGE}\n`);
  });

  it("refuses an environment that has no settings file with exit 2", async () => {
    const { result, err } = await captureStreams(() => main(["--env", "nowhere"]));
    expect(result).toBe(2);
    expect(err).toMatch(/^--env nowhere: /);
  });

  describe("--explain JOB_ID --from FILE: a timeline from a diagnostics file, with no run", () => {
    const diagnostics = {
      seed: 7,
      jobs: [
        {
          callId: "job-7-335",
          rejected: false,
          runs: [{ key: "k", receivedAt: 1_000, answeredAt: 1_050, outcome: "applied", clientGone: false }],
          effects: 1,
          invocations: [{ from: 990, at: 1_100 }],
          incidents: [],
          reruns: [],
        },
      ],
    };
    const inFile = async (text: string) => {
      const dir = await mkdtemp(join(tmpdir(), "chaos-cli-"));
      const file = join(dir, "diagnostics.json");
      await writeFile(file, text);
      return file;
    };

    it("prints the job's timeline and exits 0", async () => {
      const file = await inFile(JSON.stringify(diagnostics));
      const { result, out } = await captureStreams(() => main(["--explain", "job-7-335", "--from", file]));
      expect(result).toBe(0);
      expect(out).toContain("job job-7-335: 1 runs, 1 effects");
      expect(out).toMatch(/\+ *10 {2}run 1 received \(key k\)/);
      expect(out).toContain("no run after the first: nothing to explain");
    });

    it("says a job that is not in the file, and exits 1", async () => {
      const file = await inFile(JSON.stringify(diagnostics));
      const { result, out, err } = await captureStreams(() => main(["--explain", "job-7-1", "--from", file]));
      expect(result).toBe(1);
      expect(out).toBe("");
      expect(err).toContain(`--explain job-7-1: not in ${file}`);
    });

    it("creates the folder of a --diagnostics file before the run (the bench's .tmp/ is not in a clean clone)", async () => {
      // A 100,000-event run of a clean clone ran 66 minutes, then failed to write .tmp/chaos-scale-diagnostics.json.
      const dir = await mkdtemp(join(tmpdir(), "chaos-cli-"));
      const file = join(dir, "not", "yet", "diagnostics.json");
      expect(await prepareDiagnosticsFile(file)).toBeUndefined();
      expect(await readFile(file, "utf8")).toBe("");
    });

    it.each(["--diagnostics", "--timeline"])(
      "refuses a %s file that cannot be written before running anything, with exit 2",
      async (option) => {
        const dir = await mkdtemp(join(tmpdir(), "chaos-cli-"));
        const aFile = join(dir, "a-file");
        await writeFile(aFile, "");
        const file = join(aFile, "diagnostics.json");
        const { result, out, err } = await captureStreams(() => main([option, file]));
        expect(result).toBe(2);
        expect(out).toBe("");
        expect(err).toContain(`${option} ${file}: `);
        expect(err).toContain("nothing was run");
      },
    );

    it("refuses a file that is missing or is not a diagnostics file, with exit 2", async () => {
      const bad = await inFile('{"seed": 7}');
      const notThere = join(tmpdir(), "no-such-dir-for-chaos", "d.json");
      for (const [file, message] of [
        [bad, "not a diagnostics file"],
        [notThere, "ENOENT"],
      ] as const) {
        const { result, err } = await captureStreams(() => main(["--explain", "job-7-335", "--from", file]));
        expect(result).toBe(2);
        expect(err).toContain(`--from ${file}: `);
        expect(err).toContain(message);
      }
    });
  });
});
