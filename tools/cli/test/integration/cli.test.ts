import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  ExitCode,
  fraction,
  parseCommandLine,
  refuseCommandLine,
  UsageError,
  wholeNumber,
} from "../../src/index.js";

afterEach(() => vi.restoreAllMocks());

const options = {
  events: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** The UsageError `act` throws (failing the test when it throws nothing or something else). */
function usageErrorOf(act: () => unknown): UsageError {
  try {
    act();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }
  return expect.fail("expected a UsageError");
}

describe("parseCommandLine: util.parseArgs, strict, with a bad command line as UsageError", () => {
  it("reads options, their short forms and positionals", () => {
    const { values, positionals } = parseCommandLine(["show", "--events", "5", "-h"], {
      allowPositionals: true,
      options,
    });
    expect(values).toEqual({ events: "5", help: true });
    expect(positionals).toEqual(["show"]);
  });

  it("takes a negative number after an option as its value, so the range check can name it", () => {
    expect(parseCommandLine(["--events", "-3"], { options }).values.events).toBe("-3");
    expect(parseCommandLine(["--events=-3"], { options }).values.events).toBe("-3");
  });

  it.each([
    [["--nope"], "Unknown option '--nope'"],
    [["--events"], "Option '--events <value>' argument missing"],
    [["--events", "--json"], "argument is ambiguous"],
    [["--json=yes"], "Option '--json' does not take an argument"],
    [["stray"], "Unexpected argument 'stray'"],
  ])("refuses %j with a UsageError that keeps parseArgs' message and error", (argv, message) => {
    const error = usageErrorOf(() => parseCommandLine(argv, { allowPositionals: false, options }));
    expect(error.name).toBe("UsageError");
    expect(error.message).toContain(message);
    expect((error.cause as NodeJS.ErrnoException).code).toMatch(/^ERR_PARSE_ARGS_/);
  });
});

describe("number options", () => {
  const range = { fallback: 20, min: 1, max: 100 };

  it("a whole number in range, or the fallback when the option is absent", () => {
    expect(wholeNumber("sessions", "7", range)).toBe(7);
    expect(wholeNumber("sessions", undefined, range)).toBe(20);
    expect(fraction("poison-rate", "0.25", 0.01)).toBe(0.25);
    expect(fraction("poison-rate", undefined, 0.01)).toBe(0.01);
  });

  it.each([
    ["1.5", '--sessions must be a whole number, got "1.5"'],
    ["1e3", '--sessions must be a whole number, got "1e3"'],
    ["", '--sessions must be a whole number, got ""'],
    ["0", "--sessions must be between 1 and 100, got 0"],
    ["-4", "--sessions must be between 1 and 100, got -4"],
    ["101", "--sessions must be between 1 and 100, got 101"],
  ])("refuses --sessions %j: %s", (value, message) => {
    expect(usageErrorOf(() => wholeNumber("sessions", value, range)).message).toBe(message);
  });

  it.each(["2", "-0.1", "abc", " ", "NaN", "Infinity"])("refuses --poison-rate %j", (value) => {
    expect(usageErrorOf(() => fraction("poison-rate", value, 0.01)).message).toBe(
      `--poison-rate must be a number from 0 to 1, got "${value}"`,
    );
  });
});

describe("refuseCommandLine", () => {
  it("says what is wrong, then the usage, on stderr, and returns the documented exit status 2", () => {
    let err = "";
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      err += String(chunk);
      return true;
    });
    expect(refuseCommandLine(new UsageError("--live needs --env"), "usage: lint:config")).toBe(
      ExitCode.Usage,
    );
    expect(ExitCode.Usage).toBe(2);
    expect(err).toBe("--live needs --env\n\nusage: lint:config\n");
  });

  it("throws on anything that is not the command line's fault", () => {
    const crash = new TypeError("undefined is not a function");
    expect(() => refuseCommandLine(crash, "usage")).toThrow(crash);
  });
});

describe("runIfMain", () => {
  const entry = join(import.meta.dirname, "../fixtures/entry.ts");
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", entry, ...args], { encoding: "utf8" });

  it("run as the entry, exits with the status main returns", () => {
    const result = run("3");
    expect(result.stdout).toBe("ran with 3\n");
    expect(result.status).toBe(3);
  });

  it("a crash prints its stack and exits with the CLI's crash status", () => {
    const result = run("crash");
    expect(result.stderr).toMatch(/^Error: boom from the fixture\n\s+at main /);
    expect(result.status).toBe(7);
  });

  it("imported, runs nothing", async () => {
    const write = vi.spyOn(process.stdout, "write");
    const { main } = await import("../fixtures/entry.js");
    expect(typeof main).toBe("function");
    expect(write).not.toHaveBeenCalled();
  });
});
