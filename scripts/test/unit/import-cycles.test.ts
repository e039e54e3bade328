/**
 * No workspace's source imports itself in a circle (issue 28: the worker's import loop). The check is shown
 * finding the kinds of cycle it must find on files of its own, so that an empty answer means something.
 */
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importCycles } from "../../lib/import-cycles.ts";

const root = join(import.meta.dirname, "../../..");

function sourceDirs(): string[] {
  return ["packages", "local", "tools", "functions"].flatMap((tier) =>
    readdirSync(join(root, tier), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(root, tier, d.name, "src")),
  );
}

function tree(files: Readonly<Record<string, string>>): string {
  const dir = mkdtempSync(join(tmpdir(), "import-cycles-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

describe("import cycles", () => {
  it("no workspace's source imports itself in a circle, not even by types", () => {
    const found = sourceDirs().flatMap((dir) => {
      try {
        return importCycles(dir).map((c) => `${dir.slice(root.length + 1)}: ${c}`);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
        throw error;
      }
    });
    expect(found).toEqual([]);
  });

  it("finds a cycle of type imports, of re-exports, of dynamic imports and through a folder", () => {
    const dir = tree({
      "a.ts": 'import type { B } from "./b.js";\nexport type A = B;\n',
      "b.ts": 'import type { A } from "./a.js";\nexport type B = { a?: A };\n',
      "index.ts": 'export { c } from "./sub/c.js";\n',
      "sub/c.ts": 'export const c = 1;\nexport type M = typeof import("../index.js");\n',
      "d.ts": 'export const d = () => import("./e.js");\n',
      "e.ts": 'import { d } from "./d.js";\nexport const e = d;\n',
      "f.ts": 'import { c } from "./sub/c.js";\nexport const f = c;\n',
    });
    expect(importCycles(dir).sort()).toEqual([
      "a.ts -> b.ts -> a.ts",
      "d.ts -> e.ts -> d.ts",
      "sub/c.ts -> index.ts -> sub/c.ts",
    ]);
  });

  it("finds none where imports only go one way, and ignores other packages' imports", () => {
    const dir = tree({
      "a.ts": 'import { b } from "./b.js";\nimport { z } from "@scope/z";\nexport const a = b + z;\n',
      "b.ts": 'import { c } from "./c.mjs";\nexport const b = c;\n',
      "c.mts": "export const c = 1;\n",
    });
    expect(importCycles(dir)).toEqual([]);
  });
});
