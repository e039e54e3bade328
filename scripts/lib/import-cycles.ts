/**
 * Import cycles between the source files of a workspace. A cycle, even of types alone, means two files
 * that cannot be read, tested or moved one without the other: a concern split in the wrong place. The
 * imports are read with the TypeScript compiler's own pre-processor (static, `import type`, `export from`,
 * dynamic `import()` and `typeof import()` alike); only relative imports are followed, since a workspace's
 * imports of another go through that one's public API and the workspaces' own graph is npm's.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

const SOURCE = /\.(ts|mts)$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return entry === "node_modules" ? [] : sourceFiles(path);
    return SOURCE.test(entry) && !entry.endsWith(".d.ts") ? [path] : [];
  });
}

/** The file a relative specifier names: `./x.js` is `./x.ts` in the source, `./x.mjs` may be `./x.mts`. */
function target(from: string, specifier: string): string | undefined {
  const named = resolve(dirname(from), specifier);
  const candidates = [named.replace(/\.js$/, ".ts"), named.replace(/\.mjs$/, ".mts"), named];
  return candidates.find((c) => SOURCE.test(c) && existsSync(c));
}

/** Each source file under `dir` with the source files under `dir` it imports. */
export function importGraph(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(dir)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = importedFiles
      .map((i) => i.fileName)
      .filter((s) => s.startsWith("./") || s.startsWith("../"))
      .flatMap((s) => {
        const t = target(file, s);
        return t?.startsWith(dir) ? [t] : [];
      });
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/**
 * The cycles of `dir`'s import graph, one per back edge a depth-first walk meets, each as the files
 * around it relative to `dir` (`a.ts -> b.ts -> a.ts`). Empty when there is none.
 */
export function importCycles(dir: string): string[] {
  const graph = importGraph(dir);
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const cycles: string[] = [];
  const visit = (file: string): void => {
    state.set(file, "open");
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "open")
        cycles.push([...path.slice(path.indexOf(next)), next].map((f) => relative(dir, f)).join(" -> "));
      else if (state.get(next) === undefined) visit(next);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const file of [...graph.keys()].sort()) if (state.get(file) === undefined) visit(file);
  return cycles;
}
