/**
 * Bundles the function in the current directory (functions/<name>) into functions/<name>/dist:
 *   <name>.zip        what Lambda runs (handler "index.handler", runtime nodejs22.x): index.mjs and the
 *                     chunk-<hash>.mjs files it imports; code that only a dynamic import reaches (a rare
 *                     path, such as the quarantine's S3 client) is in chunks loaded on first use, so an
 *                     import of index.mjs neither parses nor evaluates it (docs/benchmarks/cold-start.md)
 *   *.mjs.map         external source maps, kept beside the zip, not in it (smaller zip, faster cold start)
 *   meta.json         esbuild metafile, for bundle-size analysis
 * Run through `npm run build` (turbo; each function's build script runs bin/bundle-function.ts), which
 * also collects every function into dist/manifest.json.
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { basename, join, relative } from "node:path";
import { build, type Plugin } from "esbuild";
import { deterministicZip } from "./deterministic-zip.js";

/**
 * zod's locales other than English: `import { z } from "zod"` imports a namespace object esbuild cannot
 * shake, and with it every locale (some 350 KiB of a 1 MiB bundle, all evaluated at each cold start:
 * docs/benchmarks/cold-start.md). A bundle that holds one is refused.
 */
const NEVER_CALLED = /node_modules\/zod\/v4\/locales\/(?!en\.js$|index\.js$)[^/]+\.js$/;

/**
 * Packages whose modules have no side effects at load but whose package.json does not say so
 * (`"sideEffects": false`, as their sibling SDK packages do). Without the flag esbuild keeps every module
 * such a package reaches, used or not: @aws-sdk/lib-dynamodb, reached through @mcp-pipeline/aws's client
 * factories, put the whole DynamoDB client (about 55 KiB) on the import path of dlq-redrive, which never
 * calls DynamoDB (docs/benchmarks/cold-start.md).
 */
const SIDE_EFFECT_FREE = ["@aws-sdk/lib-dynamodb"];

const sideEffectFree: Plugin = {
  name: "side-effect-free",
  setup(build) {
    const inPackage = (path: string) =>
      SIDE_EFFECT_FREE.some((name) => path.includes(`/node_modules/${name}/`));
    build.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === sideEffectFree) return undefined;
      const named = SIDE_EFFECT_FREE.some((name) => args.path === name || args.path.startsWith(`${name}/`));
      if (!named && !(args.path.startsWith(".") && inPackage(args.importer))) return undefined;
      const resolved = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: sideEffectFree,
      });
      if (resolved.errors.length > 0 || !inPackage(resolved.path)) return undefined;
      return { path: resolved.path, sideEffects: false };
    });
  },
};

/** Bundles `functionDir` into `outDir`; returns the size of the code in the zip. */
export async function bundleFunction(
  functionDir: string,
  outDir: string,
): Promise<{ name: string; codeBytes: number }> {
  const name = basename(functionDir);
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });

  const result = await build({
    absWorkingDir: functionDir,
    entryPoints: { index: "src/index.ts" },
    outdir: outDir,
    outExtension: { ".js": ".mjs" },
    // ESM code splitting: what only a dynamic import reaches goes to chunks that Node loads on first use
    // (nodejs22.x imports relative ES modules from the deployment package). Chunk names are content
    // hashes, so the same sources give the same files.
    splitting: true,
    chunkNames: "chunk-[hash]",
    bundle: true,
    platform: "node",
    target: "node22",
    format: "esm",
    minify: true,
    // Names survive minification: errors are matched by `name`, and stack traces stay readable.
    keepNames: true,
    sourcemap: "external",
    sourcesContent: true,
    metafile: true,
    legalComments: "none",
    // The AWS SDK is bundled (not taken from the runtime) so the deployed code is the tested code.
    mainFields: ["module", "main"],
    // Some bundled CommonJS dependencies call require() for Node built-ins; ESM output needs a require.
    banner: { js: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);" },
    plugins: [sideEffectFree],
    logLevel: "warning",
  });

  await writeFile(join(outDir, "meta.json"), `${JSON.stringify(result.metafile)}\n`);
  const outputs = Object.entries(result.metafile.outputs).filter(([path]) => path.endsWith(".mjs"));
  const unused = outputs
    .flatMap(([, output]) => Object.entries(output.inputs))
    .filter(([path, { bytesInOutput }]) => bytesInOutput > 0 && NEVER_CALLED.test(path))
    .map(([path]) => path);
  if (unused.length > 0) {
    throw new Error(
      `${name}: the bundle carries code no function calls (${unused.length} files, e.g. ${unused[0]}): ` +
        `import zod as a namespace (import * as z from "zod"), not { z }, which esbuild cannot shake`,
    );
  }
  const files = await Promise.all(
    outputs.map(async ([path]) => {
      const file = join(functionDir, path);
      return { name: relative(outDir, file), content: await readFile(file) };
    }),
  );
  await writeFile(join(outDir, `${name}.zip`), await deterministicZip(files));
  await Promise.all(files.map((f) => rm(join(outDir, f.name))));
  return { name, codeBytes: files.reduce((sum, f) => sum + f.content.byteLength, 0) };
}
