/**
 * The AWS SDK imports through barrels: `import { AwsJson1_0Protocol } from "@aws-sdk/core/protocols"` names an
 * index.js that re-exports forty names from as many files (`export { AwsRestXmlProtocol } from
 * "./xml/AwsRestXmlProtocol"`). esbuild shakes the unused re-exports out of a single bundle, but with code
 * splitting it assigns whole files to chunks by static reachability first: a file that a chunk loaded on first
 * use needs (the S3 client's XML protocol, its checksum streams) and that index.mjs reaches through a barrel
 * (DynamoDB's import of the JSON protocol) went into a chunk that index.mjs imports, so every cold start
 * evaluated the S3 XML protocol, the event-stream codec and web streams (docs/benchmarks/cold-start.md).
 *
 * Rewritten to import each name from the file that defines it, a module reaches only what it uses. A barrel
 * that also defines names of its own (`export const v4 = bindV4(getRandomValues)` beside its re-exports) is
 * split in two: its own code becomes a module of its own (the file with a suffix) that importers of
 * those names import, and the barrel itself re-exports that module and the rest, so that its definitions
 * exist once whichever way a module imports them.
 */
import { readFile } from "node:fs/promises";
import { dirname, relative, resolve, sep } from "node:path";
import type { PluginBuild } from "esbuild";

/**
 * `{ a, b as c, type D }` (a named import or re-export list) as [imported, local] pairs; TypeScript's
 * type-only names (`type D`: with verbatimModuleSyntax every type is marked) are left out, being erased.
 */
function namesOf(list: string): [string, string][] {
  return list
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name.length > 0 && !name.startsWith("type "))
    .map((name) => {
      const [imported = name, local = imported] = name.split(/\s+as\s+/);
      return [imported, local];
    });
}

/**
 * Named imports and re-exports, as the SDK's dist-es writes them (one line) and as Biome formats ours (a
 * list over several lines); `import type { … }` is erased, and left as it is.
 */
const NAMED_IMPORT_OR_EXPORT = /^(import|export) \{([^}]*)\} from "([^"]+)";$/gm;
const RE_EXPORT = /^export \{([^}]*)\} from "([^"]+)";$/gm;
/** A barrel's lines other than its re-exports: blank lines, comments, or code of its own. */
const OTHER_LINES = /^(?!\s*$)(?!\s*(?:\/\/|\/\*|\*))(?!export type \{).+$/m;

/** Whether a module defines code of its own beside its named re-exports (comments do not count). */
const hasOwnCode = (source: string) => OTHER_LINES.test(source.replace(RE_EXPORT, ""));

/** What a module re-exports by name: exported name -> [specifier, name in that module]. */
export function reExportsOf(source: string): Map<string, [string, string]> {
  const found = new Map<string, [string, string]>();
  for (const [, list = "", specifier = ""] of source.matchAll(RE_EXPORT)) {
    for (const [imported, exported] of namesOf(list)) found.set(exported, [specifier, imported]);
  }
  return found;
}

interface Barrel {
  readonly reExports: Map<string, [string, string]>;
  /** Whether the module defines names of its own beside its re-exports. */
  readonly ownCode: boolean;
}

/** The suffix that names a barrel's own half (the file, loaded without its re-exports). */
export const OWN_HALF = "?barrel-own";

/**
 * `target` as a specifier relative to `importer`. A rewritten module's source goes into the source map
 * (sourcesContent), which esbuild hashes into the chunk names: an absolute path there made the same commit
 * build to other chunk names, and other zips, in every other checkout folder, and put the machine's path in
 * the maps. Relative to the importer, it is the same wherever the repository is.
 */
export function specifierFrom(importer: string, target: string): string {
  const path = relative(dirname(importer), target).split(sep).join("/");
  return path.startsWith("../") ? path : `./${path}`;
}

/**
 * Resolves the own halves of barrels on `build` and returns the rewrite of an SDK module's source: its
 * named imports and re-exports from barrels as imports from the defining modules, and, for a barrel with
 * code of its own, that code replaced by a re-export of its own half (the file with the suffix OWN_HALF).
 */
export function directImports(
  build: PluginBuild,
): (source: string, file: string, suffix?: string) => Promise<string> {
  const rewriter = new DirectImports(build);
  // The same file with a suffix is another module for esbuild, in the file's package (its side effects flag).
  build.onResolve({ filter: /\?barrel-own$/ }, (args) => ({
    path: resolve(args.resolveDir, args.path.slice(0, -OWN_HALF.length)),
    suffix: OWN_HALF,
  }));
  return (source, file, suffix) => rewriter.module(source, file, suffix);
}

/** The rewrite of one build's modules, with the barrels it has read (each file read once). */
class DirectImports {
  readonly #build: PluginBuild;
  readonly #barrels = new Map<string, Promise<Barrel>>();

  constructor(build: PluginBuild) {
    this.#build = build;
  }

  async module(source: string, file: string, suffix?: string): Promise<string> {
    // A barrel's own half: what it defines, and the imports that needs, without its re-exports.
    if (suffix === OWN_HALF) return this.#direct(source.replace(RE_EXPORT, ""), file);
    const barrel = await this.#barrelAt(file);
    if (barrel.reExports.size === 0 || !barrel.ownCode || !file.endsWith(".js"))
      return this.#direct(source, file);
    const reExports = [...source.matchAll(RE_EXPORT)].map(([statement]) => statement).join("\n");
    const ownHalf = `${specifierFrom(file, file)}${OWN_HALF}`;
    return this.#direct(`export * from ${JSON.stringify(ownHalf)};\n${reExports}\n`, file);
  }

  #barrelAt(path: string): Promise<Barrel> {
    let found = this.#barrels.get(path);
    if (!found) {
      found = readFile(path, "utf8").then(
        (source) => ({ reExports: reExportsOf(source), ownCode: hasOwnCode(source) }),
        () => ({ reExports: new Map(), ownCode: false }),
      );
      this.#barrels.set(path, found);
    }
    return found;
  }

  async #resolve(specifier: string, importer: string): Promise<string | undefined> {
    const resolved = await this.#build.resolve(specifier, {
      kind: "import-statement",
      importer,
      resolveDir: dirname(importer),
    });
    return resolved.errors.length > 0 || resolved.external ? undefined : resolved.path;
  }

  /** Follows `name` through re-exports from the module at `path` to the module that defines it. */
  async #origin(path: string, name: string): Promise<{ path: string; name: string }> {
    const next = (await this.#barrelAt(path)).reExports.get(name);
    const target = next && (await this.#resolve(next[0], path));
    return next && target ? this.#origin(target, next[1]) : { path, name };
  }

  /** `import { … } from "barrel";` (or `export { … } from`) as statements naming the defining modules. */
  async #rewrite(keyword: string, list: string, specifier: string, file: string): Promise<string> {
    const statement = `${keyword} {${list}} from "${specifier}";`;
    const path = await this.#resolve(specifier, file);
    if (!path || (await this.#barrelAt(path)).reExports.size === 0) return statement;
    const bySource = new Map<string, string[]>();
    for (const [imported, local] of namesOf(list)) {
      const from = await this.#origin(path, imported);
      const barrel = await this.#barrelAt(from.path);
      // Only the SDK's barrels (plain JavaScript) are split; ours are imported whole, code and all.
      const split = barrel.reExports.size > 0 && barrel.ownCode && from.path.endsWith(".js");
      const direct = specifierFrom(file, from.path);
      const target = split ? `${direct}${OWN_HALF}` : from.path === path ? specifier : direct;
      const clause = from.name === local ? local : `${from.name} as ${local}`;
      bySource.set(target, [...(bySource.get(target) ?? []), clause]);
    }
    // On as many lines as the statement had, so that the module's line numbers (its source map) stay.
    const lines = "\n".repeat(statement.split("\n").length - 1);
    return `${[...bySource]
      .map(([target, clauses]) => `${keyword} { ${clauses.join(", ")} } from ${JSON.stringify(target)};`)
      .join(" ")}${lines}`;
  }

  async #direct(source: string, file: string): Promise<string> {
    const statements = [...source.matchAll(NAMED_IMPORT_OR_EXPORT)];
    const rewritten = await Promise.all(
      statements.map(([, keyword = "", list = "", specifier = ""]) =>
        this.#rewrite(keyword, list, specifier, file),
      ),
    );
    let index = 0;
    return source.replace(NAMED_IMPORT_OR_EXPORT, () => rewritten[index++] ?? "");
  }
}
