// Code moved in issue 11 (scripts/bundle-function.ts to tools/bundler, packages/redrive to
// packages/recovery); the docs and comments that name a place in the repository must name one that
// exists, or the reader who follows them finds nothing. Checked: every path under packages/, local/, tools/
// and functions/ (to the file) and every `scripts/<file>.ts` named in the docs, the READMEs and the code.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
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
// The whole path is checked, down to the file: `packages/worker/src/process-jobs.ts` must exist, not only
// `packages/worker`.
const PATH =
  /(?<![\w@.-])(?<![\w-]\/)(?:(?:packages|local|functions)\/[a-z][a-z0-9-]*|tools\/(?!list\b|call\b)[a-z][a-z0-9-]*|scripts\/[a-z][a-z0-9-]*\.ts)(?:\/[A-Za-z0-9_.*{},-]+)*/g;

/** Paths a guide names as an example of a file the reader would create. */
const EXAMPLES = new Set(["packages/tools/src/word-count.ts"]);

/**
 * Whether a named path exists: as written; as the TypeScript file an import's `.js` names; or as the stem
 * of generated files (`x.generated` for `x.generated.js` and `x.generated.d.ts`). Globs and brace lists
 * name sets, not a file: they are not checked.
 */
function named(path: string): boolean {
  if (/[*{}]/.test(path) || EXAMPLES.has(path)) return true;
  if (existsSync(join(root, path))) return true;
  if (path.endsWith(".js") && existsSync(join(root, `${path.slice(0, -3)}.ts`))) return true;
  const dir = join(root, dirname(path));
  return existsSync(dir) && readdirSync(dir).some((f) => f.startsWith(`${basename(path)}.`));
}

describe("paths named in docs and code", () => {
  it("every path under a tier (to the file) and scripts/<file>.ts named exists", () => {
    const missing: string[] = [];
    for (const file of sources()) {
      const text = readFileSync(join(root, file), "utf8");
      for (const [match] of text.matchAll(PATH)) {
        // A sentence's full stop or a colon after the path is not part of it.
        const path = match.replace(/[.,:]+$/, "");
        if (!named(path)) missing.push(`${file}: ${path}`);
      }
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
