/**
 * Issue 26 item 15: every command that builds before it runs (npm start, npm run chaos,
 * npm run bench:local-pipeline) checks its command line first, so a bad flag is refused before the build
 * and its error is the last thing on the screen: nothing is built, nothing follows the error, exit 2.
 * Driven through npm, as an operator types them.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../../..");

function npm(args: readonly string[]) {
  const result = spawnSync("npm", [...args], { cwd: root, encoding: "utf8", timeout: 120_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The last line with text on it. */
const lastLine = (text: string) => text.trimEnd().split("\n").at(-1) ?? "";

describe("a bad flag is refused before the build, and its error is the last line", () => {
  it.each([
    [
      ["start", "--", "--frobnicate"],
      "Unknown option '--frobnicate' (`npm start -- --help` lists the options)",
    ],
    [["start", "--", "--events", "-5"], "--events must be between 0 and 1000000, got -5"],
    [["start", "--", "--poison-rate", "2"], "--poison-rate must be a number from 0 to 1"],
    [["start", "--", "--serve", "--events", "10"], "--events is for a scenario run, and --serve runs none"],
    [["run", "chaos", "--", "--events", "0"], "--events must be between 1 and 100000, got 0"],
    [["run", "chaos", "--", "--seed"], "Option '--seed <value>' argument missing"],
    [["run", "bench:local-pipeline", "--", "--runs", "0"], "--runs must be between 1 and 50, got 0"],
    [["run", "bench:local-pipeline", "--", "--nope"], "Unknown option '--nope'"],
  ])(
    "npm %j",
    (args, message) => {
      const { code, stdout, stderr } = npm(args);
      expect(code, stderr).toBe(2);
      expect(lastLine(stderr)).toContain(message);
      expect(stderr).not.toContain("building the function bundles");
      // npm's banner is all there is on stdout: nothing ran.
      expect(stdout.replace(/^> .*$/gm, "").trim()).toBe("");
    },
    120_000,
  );

  it("an unknown environment is refused before the build too (npm start, npm run chaos)", () => {
    const start = npm(["start", "--", "--env", "nowhere"]);
    expect(start.code).toBe(2);
    expect(start.stderr).not.toContain("building the function bundles");
    expect(lastLine(start.stderr)).toBe("environments: dev, prod (e.g. --env dev)");
    const chaos = npm(["run", "chaos", "--", "--env", "nowhere"]);
    expect(chaos.code).toBe(2);
    expect(chaos.stderr).not.toContain("building the function bundles");
    expect(lastLine(chaos.stderr)).toContain("terraform/environments/nowhere/terraform.tfvars.json");
  }, 120_000);

  it("--help needs no build either", () => {
    for (const args of [
      ["start", "--silent", "--", "--help"],
      ["run", "chaos", "--silent", "--", "--help"],
      ["run", "bench:local-pipeline", "--silent", "--", "--help"],
    ]) {
      const { code, stdout, stderr } = npm(args);
      expect(code, stderr).toBe(0);
      expect(stderr).not.toContain("building the function bundles");
      expect(stdout).toMatch(/^npm (start|run chaos|run bench:local-pipeline) -- \[options\]/);
    }
  }, 120_000);
});
