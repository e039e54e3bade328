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
import { basename, dirname, join, relative } from "node:path";
import { type BuildOptions, build, type Metafile, type Plugin } from "esbuild";
import { deterministicZip } from "./deterministic-zip.js";
import { directImports } from "./direct-imports.js";
import { projectedJson } from "./projected-json.js";

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

/**
 * Packages bundled from more than one node_modules folder: npm installs a workspace's dependency in the
 * workspace's own node_modules when the root holds another version (fauxqs, a test dependency, put a newer
 * @aws-sdk/client-s3 there), and esbuild bundles each copy. Three copies of the S3 client made 100 KiB of
 * dlq-redrive's zip and import (docs/benchmarks/cold-start.md); the cure is the workspaces' version pinned at
 * the root (package.json's devDependencies), so that npm hoists one copy.
 */
export function duplicatedPackages(inputs: readonly string[]): string[] {
  const folders = new Map<string, Set<string>>();
  for (const path of inputs) {
    const found = path.match(/^(.*node_modules\/)((?:@[^/]+\/)?[^/]+)\//);
    if (!found?.[1] || !found[2]) continue;
    folders.set(found[2], (folders.get(found[2]) ?? new Set()).add(found[1]));
  }
  return [...folders]
    .filter(([, dirs]) => dirs.size > 1)
    .map(([name, dirs]) => `${name} (${[...dirs].join(", ")})`);
}

/**
 * The SDK's default credential chain, resolved to a chain of the two links Lambda answers (environment and
 * container credentials): the others, and the STS/SSO/sign-in clients they need, never run in a function but
 * made a fifth of each zip (packages/aws/src/lambda-credentials.ts, docs/benchmarks/cold-start.md).
 */
export const LAMBDA_CREDENTIALS = join(
  import.meta.dirname,
  "../../../packages/aws/src/lambda-credentials.ts",
);

/**
 * Packages only a browser runs, left out of the zip: @aws-sdk/core's client entry exports the browser's
 * user-agent provider next to Node's, and its `import("bowser")` (a user-agent parser, 37 KiB) became a
 * chunk that Node never loads. An import of it would fail loudly ("Cannot find package"), not silently.
 */
const BROWSER_ONLY = ["bowser"];

/**
 * The SDK's event-stream marshaller and HTTP/2 handler, resolved to stand-ins that fail if used: only event
 * streams (Kinesis's SubscribeToShard) need them, no function calls one, and the Kinesis client loaded
 * node:http2 and the event-stream codec at every cold start (packages/aws/src/without-event-streams.ts).
 */
export const WITHOUT_EVENT_STREAMS = join(
  import.meta.dirname,
  "../../../packages/aws/src/without-event-streams.ts",
);
/**
 * The S3 client's flexible-checksums plugin, resolved to one that refuses what would need a checksum: the
 * functions' S3 writes need none (packages/aws/src/without-flexible-checksums.ts says why), and its code was
 * about 13 KiB of each zip with an S3 client.
 */
export const WITHOUT_FLEXIBLE_CHECKSUMS = join(
  import.meta.dirname,
  "../../../packages/aws/src/without-flexible-checksums.ts",
);
const FLEXIBLE_CHECKSUMS_PLUGIN =
  /[\\/]@aws-sdk[\\/]checksums[\\/]dist-es[\\/]submodules[\\/]flexible-checksums[\\/]getFlexibleChecksumsPlugin\.js$/;
/**
 * The SDK's JavaScript SHA-256, MD5 and SHA-1, resolved to classes that fail with the cause: each is the
 * fallback of a Node class for a Node whose crypto lacks the algorithm, which Lambda's does not
 * (packages/aws/src/without-js-hashes.ts), and they were about 7.6 KiB of every zip and import.
 */
export const WITHOUT_JS_HASHES = join(import.meta.dirname, "../../../packages/aws/src/without-js-hashes.ts");
const JS_HASHES = [
  /[\\/]@smithy[\\/]core[\\/]dist-es[\\/]submodules[\\/]checksum[\\/]sha256[\\/]Sha256Js\.js$/,
  /[\\/]@smithy[\\/]core[\\/]dist-es[\\/]submodules[\\/]checksum[\\/]md5[\\/]Md5Js\.js$/,
  /[\\/]@aws-sdk[\\/]checksums[\\/]dist-es[\\/]submodules[\\/]sha[\\/]sha1[\\/]Sha1Js\.js$/,
];
const EVENT_STREAM_MODULES = [
  /[\\/]@smithy[\\/]node-http-handler[\\/]dist-es[\\/]node-http2-handler\.js$/,
  /[\\/]@smithy[\\/]core[\\/]dist-es[\\/]submodules[\\/]event-streams[\\/]eventstream-serde[\\/]EventStreamMarshaller\.js$/,
];

const lambdaOnly: Plugin = {
  name: "lambda-only",
  setup(build) {
    build.onResolve({ filter: /^@aws-sdk\/credential-provider-node$/ }, () => ({ path: LAMBDA_CREDENTIALS }));
    // The event-stream module that @smithy/core's HTTP protocol imports on first use (the codec, 14 KiB).
    build.onResolve({ filter: /^@smithy\/core\/event-streams$/ }, (args) =>
      args.kind === "dynamic-import" ? { path: WITHOUT_EVENT_STREAMS } : undefined,
    );
    // SDK modules that an import names by a path of the SDK's own, resolved to their stand-in.
    const standIns: readonly (readonly [RegExp, readonly RegExp[], string])[] = [
      [/(node-http2-handler|EventStreamMarshaller)(\.js)?$/, EVENT_STREAM_MODULES, WITHOUT_EVENT_STREAMS],
      [/getFlexibleChecksumsPlugin(\.js)?$/, [FLEXIBLE_CHECKSUMS_PLUGIN], WITHOUT_FLEXIBLE_CHECKSUMS],
      [/(Sha256Js|Md5Js|Sha1Js)(\.js)?$/, JS_HASHES, WITHOUT_JS_HASHES],
    ];
    for (const [filter, modules, standIn] of standIns) {
      build.onResolve({ filter }, async (args) => {
        if (args.pluginData === lambdaOnly) return undefined;
        const resolved = await build.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: lambdaOnly,
        });
        return modules.some((module) => module.test(resolved.path)) ? { path: standIn } : undefined;
      });
    }
    build.onResolve({ filter: new RegExp(`^(${BROWSER_ONLY.join("|")})$`) }, (args) => ({
      path: args.path,
      external: true,
    }));
  },
};

/**
 * An SDK client's schemas (schemas_0.js: one array per shape and operation, 481 of them for S3) are pure
 * data, but their traits are written with computed keys (`{ [_hH]: _xaa }`, `_hH` a string constant of the
 * same file), which esbuild must assume may run code, so it kept every schema a client has: 64 KiB of S3's
 * in each zip, for the one or two operations a function calls. Written with the constant's string as the
 * key (the same object), unused schemas are shaken out like any unused declaration.
 */
const SDK_SCHEMAS = /[\\/]@aws-sdk[\\/]client-[^\\/]+[\\/]dist-es[\\/]schemas[\\/]schemas_\d+\.js$/;

/** `source` with every computed key `[_name]:` whose `_name` is a string constant of the file written as that string. */
export function withLiteralKeys(source: string): string {
  const constants = new Map<string, string>();
  for (const [, name, value] of source.matchAll(/^const (_\w+) = ("(?:[^"\\]|\\.)*");$/gm)) {
    if (name && value) constants.set(name, value);
  }
  return source.replace(/\[(_\w+)\]:/g, (key, name: string) => constants.get(name)?.concat(":") ?? key);
}

/** The SDK's modules as esbuild should see them: schemas with literal keys, imports past the barrels. */
const SDK_MODULE = /[\\/]node_modules[\\/]@(?:aws-sdk|smithy)[\\/][^\\/]+[\\/]dist-es[\\/].*\.js$/;
/** The workspaces' sources (packages/<name>/src, functions/<name>/src), whose index.ts files are barrels too. */
const WORKSPACE_SOURCE = /[\\/](?:packages|functions)[\\/][^\\/]+[\\/]src[\\/](?:[^\\/]+[\\/])*[^\\/]+\.ts$/;

/**
 * Modules that import past barrels (direct-imports.ts): the SDK's and ours, so that a module a lazily loaded
 * chunk needs is not loaded at import because an index re-exports it (a lazy loader can live anywhere).
 */
export const directModules: Plugin = {
  name: "direct-modules",
  setup(build) {
    const direct = directImports(build);
    build.onLoad({ filter: SDK_MODULE }, async (args) => {
      const source = await readFile(args.path, "utf8");
      return {
        contents: await direct(
          SDK_SCHEMAS.test(args.path) ? withLiteralKeys(source) : source,
          args.path,
          args.suffix,
        ),
        loader: "js",
        resolveDir: dirname(args.path),
      };
    });
    build.onLoad({ filter: WORKSPACE_SOURCE }, async (args) =>
      args.path.includes("node_modules")
        ? undefined
        : {
            contents: await direct(await readFile(args.path, "utf8"), args.path),
            loader: "ts",
            resolveDir: dirname(args.path),
          },
    );
  },
};

/** Bundles `functionDir` into `outDir`; returns the size of the code in the zip. */
export async function bundleFunction(
  functionDir: string,
  outDir: string,
  options: {
    /** Plugins run before the bundler's own: a test's patch of a source file (the emulators' test kit's sabotage). */
    readonly plugins?: readonly Plugin[];
  } = {},
): Promise<{ name: string; codeBytes: number }> {
  const name = basename(functionDir);
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  const result = await build(buildOptions(name, functionDir, outDir, options.plugins ?? []));
  await writeFile(join(outDir, "meta.json"), `${JSON.stringify(result.metafile)}\n`);
  const outputs = Object.entries(result.metafile.outputs).filter(([path]) => path.endsWith(".mjs"));
  refuseNeverCalled(name, outputs);
  refuseDuplicates(name, outputs);
  return { name, codeBytes: await zipOutputs(name, functionDir, outDir, outputs) };
}

/** esbuild's options for a function: Lambda's Node, ESM split into chunks, minified, with the plugins above. */
function buildOptions(
  name: string,
  functionDir: string,
  outDir: string,
  plugins: readonly Plugin[],
): BuildOptions & { metafile: true } {
  return {
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
    plugins: [
      ...plugins,
      lambdaOnly,
      // The function's settings key (functions/tool-worker: tool_worker), whose part of the declaration it reads.
      projectedJson(name.replaceAll("-", "_")),
      directModules,
      sideEffectFree,
    ],
    logLevel: "warning",
  };
}

/** The bundle's .mjs outputs (index.mjs and its chunks) as the metafile lists them. */
type Outputs = [string, Metafile["outputs"][string]][];

/** Refuses a bundle that carries code no function calls (NEVER_CALLED). */
function refuseNeverCalled(name: string, outputs: Outputs): void {
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
}

/** Refuses a bundle that carries a package from more than one node_modules folder (duplicatedPackages). */
function refuseDuplicates(name: string, outputs: Outputs): void {
  const duplicated = duplicatedPackages(
    outputs.flatMap(([, output]) =>
      Object.entries(output.inputs).flatMap(([path, { bytesInOutput }]) => (bytesInOutput > 0 ? [path] : [])),
    ),
  );
  if (duplicated.length > 0) {
    throw new Error(
      `${name}: the bundle carries two copies of ${duplicated.join("; ")}: pin the workspaces' version in ` +
        "the root package.json so that npm installs one copy",
    );
  }
}

/** Moves the code into <name>.zip (the source maps stay beside it); returns the code's size. */
async function zipOutputs(
  name: string,
  functionDir: string,
  outDir: string,
  outputs: Outputs,
): Promise<number> {
  const files = await Promise.all(
    outputs.map(async ([path]) => {
      const file = join(functionDir, path);
      return { name: relative(outDir, file), content: await readFile(file) };
    }),
  );
  await writeFile(join(outDir, `${name}.zip`), await deterministicZip(files));
  await Promise.all(files.map((f) => rm(join(outDir, f.name))));
  return files.reduce((sum, f) => sum + f.content.byteLength, 0);
}
