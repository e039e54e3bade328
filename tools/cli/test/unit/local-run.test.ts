import { describe, expect, it } from "vitest";
import {
  LOCAL_RUN_OPTIONS,
  localRunOptions,
  parseCommandLine,
  seedOption,
  UsageError,
} from "../../src/index.js";

const ENVIRONMENT = /^[a-z][a-z0-9-]{0,15}$/;

/** The options of `argv` as npm start and npm run chaos read them, with a 100 s default timeout. */
const read = (argv: readonly string[], environ: NodeJS.ProcessEnv = {}) =>
  localRunOptions(parseCommandLine(argv, { options: LOCAL_RUN_OPTIONS }).values, environ, {
    timeoutSeconds: 100,
    environmentName: ENVIRONMENT,
  });

describe("localRunOptions: the options npm start and npm run chaos share", () => {
  it("has a default for each", () => {
    expect(read([])).toEqual({
      env: "dev",
      timeScale: 10,
      timeoutMs: 100_000,
      distDir: undefined,
      partialSplitAccounting: undefined,
      json: false,
      verbose: false,
      help: false,
    });
  });

  it("reads each", () => {
    expect(
      read([
        ...["--env", "prod", "--time-scale", "5", "--timeout", "60", "--dist", "out"],
        ...["--partial-split-accounting", "counts-attempt", "--json", "--verbose", "-h"],
      ]),
    ).toEqual({
      env: "prod",
      timeScale: 5,
      timeoutMs: 60_000,
      distDir: "out",
      partialSplitAccounting: "counts-attempt",
      json: true,
      verbose: true,
      help: true,
    });
  });

  it("takes --json from npm's own flag (npm start --json passes it on as npm_config_json)", () => {
    expect(read([], { npm_config_json: "true" }).json).toBe(true);
    expect(read([], { npm_config_json: "false" }).json).toBe(false);
  });

  it.each([
    [["--env", "../prod"], '--env must name an environment (e.g. dev), got "../prod"'],
    [["--env="], '--env must name an environment (e.g. dev), got ""'],
    [["--dist="], "--dist needs a directory"],
    [["--time-scale", "0"], "--time-scale must be between 1 and 1000, got 0"],
    [["--time-scale", "1001"], "--time-scale must be between 1 and 1000, got 1001"],
    [["--time-scale", "fast"], '--time-scale must be a whole number, got "fast"'],
    [["--timeout", "0"], "--timeout must be between 1 and 86400, got 0"],
    [["--timeout", "-1"], "--timeout must be between 1 and 86400, got -1"],
    [["--timeout", "86401"], "--timeout must be between 1 and 86400, got 86401"],
    [["--timeout", "5m"], '--timeout must be a whole number, got "5m"'],
    [["--timeout"], "Option '--timeout <value>' argument missing"],
    [["--json=yes"], "Option '--json' does not take an argument"],
  ])("refuses %j: %s", (argv, message) => {
    expect(() => read(argv)).toThrow(UsageError);
    expect(() => read(argv)).toThrow(message);
  });
});

describe("seedOption", () => {
  it("is 42 when absent, any 32-bit unsigned whole number when given", () => {
    expect([seedOption(undefined), seedOption("0"), seedOption("4294967295")]).toEqual([
      42, 0, 4_294_967_295,
    ]);
  });

  it.each([
    ["4294967296", "--seed must be between 0 and 4294967295, got 4294967296"],
    ["-1", "--seed must be between 0 and 4294967295, got -1"],
    ["1.5", '--seed must be a whole number, got "1.5"'],
  ])("refuses %s", (value, message) => {
    expect(() => seedOption(value)).toThrow(new UsageError(message));
  });
});
