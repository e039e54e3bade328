/**
 * The documented wait for a served stack (`until grep -qsx '# ready' FILE; ...`) ends when the stack stops
 * before it is ready, instead of waiting forever with the reason scrolled away: here a bad option, which
 * `npm start` refuses before the build (exit 2). The lines are the docs' own, with the option added.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SERVE_HINT } from "@mcp-pipeline/local-runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../../..");
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "serve-wait-"));
});
afterAll(() => rm(work, { recursive: true, force: true }));

/** The first two lines of the ```sh block that starts with `rm -f /tmp/<file>; npm start`. */
function startLines(doc: string, file: string): [string, string] {
  const text = readFileSync(join(root, doc), "utf8");
  const lines = text.split("\n").map((l) => l.replace(/\s+#.*$/, ""));
  const at = lines.findIndex((l) => l.startsWith(`rm -f /tmp/${file}; npm start --silent -- --serve`));
  expect(at, `${doc} starts a stack into /tmp/${file}`).toBeGreaterThanOrEqual(0);
  return [lines[at] as string, lines[at + 1] as string];
}

describe("the documented wait for # ready", () => {
  it.each([
    ["docs/local-runtime.md", "stack.env"],
    ["docs/operations.md", "stack.env"],
    ["docs/operations.md", "drill.env"],
  ])(
    "%s (%s) ends when the stack stops before it is ready",
    (doc, file) => {
      const [start, wait] = startLines(doc, file);
      expect(wait).toMatch(/^until grep -qsx '# ready' /);
      const script = [start.replace("--serve", "--serve --no-such-option"), wait, "echo waited"]
        .join("\n")
        .replaceAll("/tmp/", `${work}/`);
      // A wait that never ends is killed after 120 s: status null, the test fails.
      const result = spawnSync("bash", ["-c", script], { cwd: root, encoding: "utf8", timeout: 120_000 });
      expect(result.status, result.stderr).toBe(0);
      expect(result.stdout.trim()).toBe("waited");
      expect(result.stderr).toContain("Unknown option '--no-such-option'");
      expect(result.stderr).toContain("No such process");
    },
    150_000,
  );

  it("the hint --serve prints is the documented lines", () => {
    const [start, wait] = startLines("docs/local-runtime.md", "stack.env");
    expect(SERVE_HINT.slice(0, 2)).toEqual([start, wait]);
  });
});
