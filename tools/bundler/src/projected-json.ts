/**
 * JSON files that a function's code imports whole but reads a small part of, projected at build time to that
 * part, so that a bundle does not carry the rest (docs/benchmarks/cold-start.md). The files in the repository
 * stay the one declaration; only the bundle's copy is cut.
 */
import { readFile } from "node:fs/promises";
import type { Plugin } from "esbuild";

/** terraform/modules/pipeline/function-environment.json, as packages/settings reads it. */
export interface FunctionEnvironmentDeclaration {
  readonly sources: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly functions: Readonly<
    Record<string, { readonly tuning: Readonly<Record<string, Readonly<Record<string, unknown>>>> }>
  >;
}

const withoutDescription = (entry: Readonly<Record<string, unknown>>) =>
  Object.fromEntries(Object.entries(entry).filter(([key]) => key !== "description"));

const mapValues = <T, U>(record: Readonly<Record<string, T>>, f: (value: T) => U): Record<string, U> =>
  Object.fromEntries(Object.entries(record).map(([key, value]) => [key, f(value)]));

/**
 * The declaration as the bundle of function `fn` (its settings key: `tool_worker`) needs it: its own tuning
 * (variable, range, default) and the sources' ranges. A function's config.ts reads its own tuning
 * (packages/settings' `functionTuning(fn)`, which names what a bundle holds when asked for another); the
 * other functions' parts, the `wired` map (read by Terraform and the local pipeline, not by a function) and
 * the descriptions (documentation for the settings schema and Terraform's variables) were some 4.7 KiB of each
 * zip. A function the file does not declare (the bench's Powertools equivalent) gets no function part.
 */
export function declarationFor(
  declaration: FunctionEnvironmentDeclaration,
  fn: string,
): FunctionEnvironmentDeclaration {
  const own = declaration.functions[fn];
  return {
    sources: mapValues(declaration.sources, withoutDescription),
    functions: own === undefined ? {} : { [fn]: { tuning: mapValues(own.tuning, withoutDescription) } },
  };
}

/**
 * An AWS SDK package's package.json as its code reads it: every client's runtimeConfig.js imports its whole
 * package.json (dependencies, scripts, exports map: about 2.4 KiB each, four clients in a worker) for
 * `packageInfo.version`, the client version in the user agent. test/unit/projected-json.test.ts holds the SDK
 * to reading nothing else.
 */
export function packageInfoFor(packageJson: { readonly name: string; readonly version: string }): {
  name: string;
  version: string;
} {
  return { name: packageJson.name, version: packageJson.version };
}

const FUNCTION_ENVIRONMENT = /[\\/]terraform[\\/]modules[\\/]pipeline[\\/]function-environment\.json$/;
export const SDK_PACKAGE_JSON = /[\\/]node_modules[\\/]@aws-sdk[\\/][^\\/]+[\\/]package\.json$/;

/** The plugin: `fn` is the bundled function's settings key (functions/tool-worker: `tool_worker`). */
export function projectedJson(fn: string): Plugin {
  return {
    name: "projected-json",
    setup(build) {
      build.onLoad({ filter: FUNCTION_ENVIRONMENT }, async (args) => ({
        contents: JSON.stringify(declarationFor(JSON.parse(await readFile(args.path, "utf8")), fn)),
        loader: "json",
      }));
      build.onLoad({ filter: SDK_PACKAGE_JSON }, async (args) => ({
        contents: JSON.stringify(packageInfoFor(JSON.parse(await readFile(args.path, "utf8")))),
        loader: "json",
      }));
    },
  };
}
