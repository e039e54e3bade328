/**
 * The documentation that describes the tree stays true to it (issue 11): every workspace has a README; what
 * a README's TypeScript example imports from @mcp-pipeline/* is exported by that package; docs/architecture.md's
 * layout lists exactly the workspaces there are, and names every Terraform module.
 *
 * Exports are read from the source text (a package's `index.ts` is its whole public API), following
 * `export * from` into the files it names: a fast check with a readable failure. The examples are then
 * typechecked as well, in one compiler run over in-memory files (nothing is written): calls, options and
 * results must fit the APIs. An example may use a name it does not declare (`record`, `context`: what the
 * reader's own code has), so "cannot find name" is not an error there, unless the name is a misspelling
 * of one the example imports.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../../..");
const WORKSPACE_DIRS = ["packages", "local", "tools", "functions"] as const;

interface Workspace {
  /** e.g. packages/batch */
  readonly dir: string;
  /** e.g. @mcp-pipeline/batch */
  readonly name: string;
  readonly exports: Readonly<Record<string, string>>;
}

function workspaces(): Workspace[] {
  return WORKSPACE_DIRS.flatMap((parent) =>
    readdirSync(join(root, parent), { withFileTypes: true })
      .filter((e) => e.isDirectory() && existsSync(join(root, parent, e.name, "package.json")))
      .map((e) => {
        const dir = `${parent}/${e.name}`;
        const json = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) as {
          name: string;
          exports?: Record<string, string>;
        };
        return { dir, name: json.name, exports: json.exports ?? {} };
      }),
  );
}

/** Comments removed, so that an `export` in a comment is not read as one (whole-line `//` only: URLs stay). */
const withoutComments = (source: string) =>
  source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");

/** Where module texts come from: the disk, or a test's own files. */
interface Sources {
  read(file: string): string;
  has(file: string): boolean;
}

const disk: Sources = { read: (f) => readFileSync(f, "utf8"), has: existsSync };

/** `./x.js` from `file` -> the source file that holds it (`x.ts`, or the file itself: `.mjs`, `.d.ts`). */
function resolveRelative(file: string, specifier: string, sources: Sources): string {
  const target = join(dirname(file), specifier);
  for (const candidate of [target.replace(/\.js$/, ".ts"), target, `${target}.ts`])
    if (sources.has(candidate)) return candidate;
  throw new Error(`${relative(root, file)}: export * from "${specifier}": no such file`);
}

/**
 * The names a module exports, from its text: `export { a, type B, c as d } (from "...")`, `export * from`
 * (followed through `read`), `export * as ns from`, and `export function/const/class/interface/type/enum`.
 */
function exportNames(file: string, sources: Sources = disk, seen: Set<string> = new Set()): Set<string> {
  const names = new Set<string>();
  if (seen.has(file)) return names;
  seen.add(file);
  const source = withoutComments(sources.read(file));
  for (const [, list] of source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g))
    for (const item of (list as string).split(",")) {
      const words = item
        .trim()
        .replace(/^type\s+/, "")
        .split(/\s+as\s+/);
      const exported = (words[1] ?? words[0] ?? "").trim();
      if (exported !== "") names.add(exported);
    }
  for (const [, alias] of source.matchAll(/export\s+\*\s+as\s+(\w+)\s+from/g)) names.add(alias as string);
  for (const [, specifier] of source.matchAll(/export\s+\*\s+from\s+["']([^"']+)["']/g))
    for (const name of exportNames(resolveRelative(file, specifier as string, sources), sources, seen))
      names.add(name);
  for (const [, name] of source.matchAll(
    /export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:abstract\s+)?(?:function\*?|const|let|var|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/g,
  ))
    names.add(name as string);
  if (/export\s+default\s/.test(source)) names.add("default");
  return names;
}

/** The ```ts blocks of a Markdown file. */
const tsBlocks = (markdown: string) =>
  [...markdown.matchAll(/^```ts\n([\s\S]*?)^```/gm)].map((m) => m[1] as string);

interface ImportedNames {
  readonly specifier: string;
  /** The names imported (`default` for a default import); empty for `import * as`. */
  readonly names: readonly string[];
}

/** What a block of TypeScript imports from @mcp-pipeline/*. */
function importsOf(block: string): ImportedNames[] {
  const imports: ImportedNames[] = [];
  // The names may not run past another import: a non-@mcp-pipeline import before one would be read as its.
  const pattern = /import\s+(type\s+)?((?:(?!\bimport\b)[\s\S])*?)\s+from\s+["'](@mcp-pipeline\/[^"']+)["']/g;
  for (const [, , clause, specifier] of block.matchAll(pattern)) {
    const text = (clause as string).trim();
    const names: string[] = [];
    const braces = /\{([^}]*)\}/.exec(text);
    if (braces)
      for (const item of (braces[1] as string).split(",")) {
        const name =
          item
            .trim()
            .replace(/^type\s+/, "")
            .split(/\s+as\s+/)[0]
            ?.trim() ?? "";
        if (name !== "") names.push(name);
      }
    const head = text
      .replace(/\{[^}]*\}/, "")
      .replace(/,\s*$/, "")
      .trim();
    if (head !== "" && !head.startsWith("*")) names.push("default");
    imports.push({ specifier: specifier as string, names });
  }
  return imports;
}

/** What the ```ts blocks of a Markdown file import from @mcp-pipeline/*. */
const examplesImports = (markdown: string) => tsBlocks(markdown).flatMap(importsOf);

/** `@mcp-pipeline/aws/s3-client` -> the file its package.json `exports` names. */
function entryFile(all: readonly Workspace[], specifier: string): string | undefined {
  const workspace = all.find((w) => specifier === w.name || specifier.startsWith(`${w.name}/`));
  if (workspace === undefined) return undefined;
  const subpath = `.${specifier.slice(workspace.name.length)}`;
  const entry = workspace.exports[subpath];
  return entry === undefined ? undefined : join(root, workspace.dir, entry);
}

/** The layout block of docs/architecture.md, and the workspace directories its lines start with. */
function layout(): { readonly block: string; readonly listed: string[] } {
  const readme = readFileSync(join(root, "docs", "architecture.md"), "utf8");
  const block = /^## Layout\n+```\n([\s\S]*?)^```/m.exec(readme)?.[1];
  if (block === undefined) throw new Error('docs/architecture.md has no "## Layout" code block');
  const listed = block
    .split("\n")
    .map((line) => /^((?:packages|local|tools|functions)\/[a-z0-9-]+)(?:\s|$)/.exec(line)?.[1])
    .filter((dir): dir is string => dir !== undefined);
  return { block, listed };
}

/** Diagnostics that only say the example uses what the reader's code declares (see the header). */
const UNDECLARED = new Set([
  2304, // Cannot find name 'record'.
  2552, // Cannot find name 'events'. Did you mean 'event'?
  7006, // Parameter 'e' implicitly has an 'any' type (it belongs to an undeclared array's callback).
  7031, // Binding element implicitly has an 'any' type (likewise).
  18004, // No value exists in scope for the shorthand property 'queueUrl'.
]);

/**
 * Typechecks every block as a module beside its README (so that imports resolve as they would in that
 * workspace), with the repository's compiler options, and returns the errors that are not UNDECLARED: a
 * relative import (`./config.js`, the reader's own file) and a name the example does not declare are
 * allowed, a misspelt import is not.
 */
function typecheckExamples(readmes: readonly string[]): string[] {
  const files = new Map<string, string>();
  for (const readme of readmes)
    for (const [i, block] of tsBlocks(readFileSync(join(root, readme), "utf8")).entries())
      files.set(join(root, dirname(readme), `readme-example-${i}.ts`), block);
  const base = ts.parseJsonConfigFileContent(
    ts.readConfigFile(join(root, "tsconfig.base.json"), ts.sys.readFile).config,
    ts.sys,
    root,
  );
  // An example shows a call, not a whole program: what it leaves unused is fine.
  const options = { ...base.options, noUnusedLocals: false, noUnusedParameters: false, noEmit: true };
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (f) => files.has(f) || fileExists.call(host, f);
  host.readFile = (f) => files.get(f) ?? readFile.call(host, f);
  host.getSourceFile = (f, language, ...rest) => {
    const text = files.get(f);
    return text === undefined
      ? getSourceFile.call(host, f, language, ...rest)
      : ts.createSourceFile(f, text, language, true);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  const errors: string[] = [];
  for (const [file, text] of files) {
    const imported = new Set(importsOf(text).flatMap((i) => i.names));
    for (const d of ts.getPreEmitDiagnostics(program, program.getSourceFile(file))) {
      const message = ts.flattenDiagnosticMessageText(d.messageText, " ");
      const suggestion = /Did you mean '([^']+)'/.exec(message)?.[1];
      const relativeImport = d.code === 2307 && /module '\.\.?\//.test(message);
      if (relativeImport || (UNDECLARED.has(d.code) && !(suggestion && imported.has(suggestion)))) continue;
      const line =
        d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
      errors.push(`${relative(root, file)} (line ${line} of the block): TS${d.code} ${message}`);
    }
  }
  return errors;
}

const all = workspaces();

describe("every workspace has a README", () => {
  it("finds the workspaces", () => {
    expect(all.map((w) => w.dir)).toEqual(expect.arrayContaining(["packages/batch", "functions/processor"]));
  });

  it.each(all.map((w) => w.dir))("%s/README.md exists", (dir) => {
    expect(existsSync(join(root, dir, "README.md")), `${dir} has no README.md`).toBe(true);
  });
});

describe("README examples import only what packages export", () => {
  const readmes = ["README.md", ...all.map((w) => `${w.dir}/README.md`)].filter((f) =>
    existsSync(join(root, f)),
  );

  it.each(readmes)("%s", (readme) => {
    const problems: string[] = [];
    for (const { specifier, names } of examplesImports(readFileSync(join(root, readme), "utf8"))) {
      const file = entryFile(all, specifier);
      if (file === undefined) {
        problems.push(`${specifier}: no workspace exports this entry`);
        continue;
      }
      const exported = exportNames(file);
      for (const name of names)
        if (!exported.has(name))
          problems.push(`${name}: not exported by ${specifier} (${relative(root, file)})`);
    }
    expect(problems).toEqual([]);
  });

  it("and typecheck against them (one compiler run over every README's examples)", () => {
    expect(typecheckExamples(readmes)).toEqual([]);
  });

  it("reads the export forms the indexes use", () => {
    const files: Record<string, string> = {
      "/p/index.ts": [
        'export { a, type B, c as d } from "./one.js";',
        'export type { E } from "./one.js";',
        'export * from "./star.js";',
        'export * as ns from "./one.js";',
        "// export const commented = 1;",
        "/** export function alsoCommented() {} */",
        "export async function f() {}",
        "export const g = 1;",
        "export class H {}",
        "export interface I {}",
        "export type J = string;",
      ].join("\n"),
      "/p/star.ts": 'export function fromStar() {}\nexport * from "./deeper.js";',
      "/p/deeper.ts": "export const deep = 2;",
    };
    const names = exportNames("/p/index.ts", { read: (f) => files[f] ?? "", has: (f) => f in files });
    expect([...names].sort()).toEqual(
      ["B", "E", "H", "I", "J", "a", "d", "deep", "f", "fromStar", "g", "ns"].sort(),
    );
  });

  it("reads the import forms the examples use", () => {
    const markdown = [
      "```ts",
      'import { a, type B, c as d } from "@mcp-pipeline/x";',
      'import type { E } from "@mcp-pipeline/x/sub";',
      'import * as s from "@mcp-pipeline/y";',
      'import {\n  f,\n  g,\n} from "@mcp-pipeline/z";',
      'import { KinesisClient } from "@aws-sdk/client-kinesis";',
      'import { resolve } from "node:path";\nimport { h } from "@mcp-pipeline/w";',
      "```",
      "```sh",
      'import { notTs } from "@mcp-pipeline/x";',
      "```",
    ].join("\n");
    expect(examplesImports(markdown)).toEqual([
      { specifier: "@mcp-pipeline/x", names: ["a", "B", "c"] },
      { specifier: "@mcp-pipeline/x/sub", names: ["E"] },
      { specifier: "@mcp-pipeline/y", names: [] },
      { specifier: "@mcp-pipeline/z", names: ["f", "g"] },
      { specifier: "@mcp-pipeline/w", names: ["h"] },
    ]);
  });
});

describe("the layout in docs/architecture.md matches the tree", () => {
  it("lists exactly the workspace directories of every tier", () => {
    const onDisk = WORKSPACE_DIRS.flatMap((parent) =>
      readdirSync(join(root, parent), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => `${parent}/${e.name}`),
    );
    expect([...layout().listed].sort()).toEqual(onDisk.sort());
  });

  it("names every Terraform module in its terraform/modules entry", () => {
    const lines = layout().block.split("\n");
    const start = lines.findIndex((l) => l.startsWith("terraform/modules"));
    expect(start, "no terraform/modules line").toBeGreaterThanOrEqual(0);
    // The entry: its line and the indented lines that continue it.
    const end = lines.findIndex((l, i) => i > start && !/^\s/.test(l));
    const entry = lines.slice(start, end === -1 ? undefined : end).join(" ");
    const modules = readdirSync(join(root, "terraform", "modules"), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(
      modules.filter((m) => !new RegExp(`\\b${m}\\b`).test(entry.replace(/^terraform\/modules/, ""))),
    ).toEqual([]);
  });
});
