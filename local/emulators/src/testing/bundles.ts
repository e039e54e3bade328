import { copyFile, mkdtemp, readFile, rename, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import {
  type Artifact,
  artifactOf,
  type BundlerPlugin,
  bundleFunction,
  manifestJson,
} from "@mcp-pipeline/bundler";

/** Every function folder under functions/, as `npm run build` bundles them. */
export const FUNCTIONS = ["processor", "tool-worker", "fifo-worker", "dlq-redrive"] as const;
export type FunctionName = (typeof FUNCTIONS)[number];

const root = join(import.meta.dirname, "../../../..");

/**
 * A deliberate break of the product, for a test that must see a check fail on a broken build: in `file`
 * (relative to the repository), `find` replaced by `replace`. `find` must occur exactly once, so a patch
 * that no longer fits the code it breaks fails loudly instead of building the unbroken product.
 */
export interface SourcePatch {
  readonly file: string;
  readonly find: string;
  readonly replace: string;
}

/** An esbuild plugin that loads the patched files with their patches applied; `loaded` collects those it patched. */
function patchedSources(patches: readonly SourcePatch[], loaded: Set<string>): BundlerPlugin {
  const byPath = new Map<string, SourcePatch[]>();
  for (const patch of patches) {
    const path = resolve(root, patch.file);
    byPath.set(path, [...(byPath.get(path) ?? []), patch]);
  }
  return {
    name: "patched-sources",
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        const own = byPath.get(args.path);
        if (!own) return undefined;
        loaded.add(args.path);
        let contents = await readFile(args.path, "utf8");
        for (const patch of own) {
          const count = contents.split(patch.find).length - 1;
          if (count !== 1)
            throw new Error(
              `the patch of ${patch.file} finds its text ${count} times, not once: ${JSON.stringify(patch.find)}`,
            );
          contents = contents.replace(patch.find, () => patch.replace);
        }
        return { contents, loader: "ts", resolveDir: dirname(args.path) };
      });
    },
  };
}

export interface BundleOptions {
  /** Breaks of the product (sabotage tests); a patch no function's bundle loads is refused. */
  readonly patches?: readonly SourcePatch[];
  /** A directory bundleAll made: the functions not named are taken from it, zips and manifest entries. */
  readonly completeFrom?: string;
}

/**
 * Bundles every function (or those named) into a fresh directory laid out like dist/: <name>.zip side
 * by side, and manifest.json as `npm run build` writes it (the local runtime runs each zip with its
 * handler and runtime).
 */
export async function bundleAll(
  names: readonly FunctionName[] = FUNCTIONS,
  options: BundleOptions = {},
): Promise<string> {
  const dist = await mkdtemp(join(tmpdir(), "local-dist-"));
  const patches = options.patches ?? [];
  const loaded = new Set<string>();
  const plugins = patches.length > 0 ? [patchedSources(patches, loaded)] : [];
  const artifacts: Record<string, Artifact> = {};
  for (const name of names) {
    const out = join(dist, name);
    await bundleFunction(join(root, "functions", name), out, { plugins });
    await rename(join(out, `${name}.zip`), join(dist, `${name}.zip`));
    artifacts[name] = artifactOf(await readFile(join(dist, `${name}.zip`)), `dist/${name}.zip`);
  }
  const unused = patches.filter((p) => !loaded.has(resolve(root, p.file)));
  if (unused.length > 0)
    throw new Error(`no function bundles ${unused.map((p) => p.file).join(", ")}: the patch breaks nothing`);
  if (options.completeFrom !== undefined) {
    const from = options.completeFrom;
    const manifest = JSON.parse(await readFile(join(from, "manifest.json"), "utf8")) as {
      artifacts: Record<string, Artifact>;
    };
    for (const name of FUNCTIONS.filter((f) => !names.includes(f))) {
      await copyFile(join(from, `${name}.zip`), join(dist, `${name}.zip`));
      const artifact = manifest.artifacts[name];
      if (artifact) artifacts[name] = artifact;
    }
  }
  await writeFile(join(dist, "manifest.json"), manifestJson(artifacts));
  return dist;
}
