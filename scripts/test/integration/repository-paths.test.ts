// Code moved in issue 11 (scripts/bundle-function.ts to tools/bundler, packages/redrive to
// packages/recovery); the docs and comments that name a place in the repository must name one that
// exists, or the reader who follows them finds nothing. Checked: every `packages/<name>`,
// `functions/<name>` and top-level `scripts/<file>.ts` named in the docs, the READMEs and the product code.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../../..");

/** The tracked files a reader follows paths from: docs, READMEs, product sources and the scripts. */
function sources(): string[] {
  const files = execFileSync(
    "git",
    ["ls-files", "--", "*.md", ...TIERS.flatMap((t) => [`${t}/*/src/*`, `${t}/*/bin/*`]), "scripts/*"],
    { cwd: root, encoding: "utf8" },
  )
    .split("\n")
    .filter((f) => f !== "");
  // Tests name made-up paths on purpose (metafile inputs, summaries of other trees).
  return files.filter(
    (f) => !/(^|\/)test\//.test(f) && !f.includes("/fixtures/") && existsSync(join(root, f)),
  );
}

const TIERS = ["packages", "local", "tools", "functions"];
// A path starts the reference (not `@mcp-pipeline/tools/registry`, not `src/tools/x`); MCP's `tools/list`
// and `tools/call` are methods, not folders.
const PATH =
  /(?<![\w@.-])(?<![\w-]\/)(?:(?:packages|local|functions)\/[a-z][a-z0-9-]*|tools\/(?!list\b|call\b)[a-z][a-z0-9-]*|scripts\/[a-z][a-z0-9-]*\.ts)\b/g;

describe("paths named in docs and code", () => {
  it("every <tier>/<name> and scripts/<file>.ts named exists", () => {
    const missing: string[] = [];
    for (const file of sources()) {
      const text = readFileSync(join(root, file), "utf8");
      for (const [path] of text.matchAll(PATH))
        if (!existsSync(join(root, path))) missing.push(`${file}: ${path}`);
    }
    expect([...new Set(missing)]).toEqual([]);
  });
});

describe("the repository stands on its own files", () => {
  it("no tracked file points outside it: no sibling directory, no design note of the team, no machine path", () => {
    const files = execFileSync("git", ["ls-files"], { cwd: root, encoding: "utf8" })
      .split("\n")
      .filter((f) => f !== "" && f !== "package-lock.json" && existsSync(join(root, f)));
    // Built from parts, so that this file does not name what it looks for.
    const outside = new RegExp(
      ["\\.\\./sha", "red/", "|DESIGN\\.md", "|/wo", "rk/(?:main|wt|shared)"].join(""),
    );
    const found = files.flatMap((file) =>
      readFileSync(join(root, file), "utf8")
        .split("\n")
        .flatMap((line, i) => (outside.test(line) ? [`${file}:${i + 1}: ${line.trim().slice(0, 120)}`] : [])),
    );
    expect(found).toEqual([]);
  });
});
