/**
 * A function's deployment package as the local runtime takes it from the build: its zip in the dist
 * directory, held to dist/manifest.json (the zip Terraform would deploy, by its SHA-256), unpacked as
 * Lambda unpacks it, with the handler and runtime Terraform gives the function (the manifest's). A changed
 * handler or runtime then fails here as it would on Lambda, instead of passing locally.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { base64Sha256Of, type Manifest, ManifestError, readManifest } from "@mcp-pipeline/bundler/manifest";
import { unpackTo } from "../esm/lambda/unzip.js";

/** A function's package cannot be run: missing from the build, changed since, or for another runtime. */
export class FunctionPackageError extends Error {
  /** The function's artifact name (`tool-worker`), or undefined for the manifest as a whole. */
  readonly artifact: string | undefined;
  constructor(artifact: string | undefined, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "FunctionPackageError";
    this.artifact = artifact;
  }
}

export interface UnpackedFunction {
  readonly taskRoot: string;
  readonly handler: string;
  readonly runtime: string;
}

/** The Lambda runtime this process can stand for: `nodejs22.x` on Node 22. */
export const LOCAL_RUNTIME = `nodejs${process.versions.node.split(".")[0]}.x`;

/** Reads `distDir`/manifest.json, or says what to do when it cannot. */
export async function readDistManifest(distDir: string): Promise<Manifest> {
  try {
    return await readManifest(distDir);
  } catch (error) {
    if (error instanceof ManifestError)
      throw new FunctionPackageError(undefined, error.message, { cause: error });
    throw error;
  }
}

/** Unpacks the artifact `name` of `distDir` into `taskRoot`, checked against the manifest. */
export async function unpackFunction(
  distDir: string,
  manifest: Manifest,
  name: string,
  taskRoot: string,
): Promise<UnpackedFunction> {
  const file = join(distDir, `${name}.zip`);
  const entry = manifest.artifacts[name];
  if (entry === undefined)
    throw new FunctionPackageError(
      name,
      `${join(distDir, "manifest.json")} has no entry for ${name}: run \`npm run build\``,
    );
  const zip = await readFile(file).catch((error: unknown) => {
    throw new FunctionPackageError(name, `${file} is missing: run \`npm run build\` first`, { cause: error });
  });
  if (base64Sha256Of(zip) !== entry.sha256)
    throw new FunctionPackageError(
      name,
      `${file} is not the zip dist/manifest.json names (sha256 ${base64Sha256Of(zip)}, the manifest's ${entry.sha256}): it changed after the build; run \`npm run build\``,
    );
  if (entry.runtime !== LOCAL_RUNTIME)
    throw new FunctionPackageError(
      name,
      `${name}'s runtime in dist/manifest.json is ${entry.runtime}, and this is Node ${process.versions.node} (${LOCAL_RUNTIME}): the local runtime runs a function only on the Node its runtime names`,
    );
  await unpackTo(zip, taskRoot).catch((error: unknown) => {
    throw new FunctionPackageError(name, `${file}: ${(error as Error).message}`, { cause: error });
  });
  return { taskRoot, handler: entry.handler, runtime: entry.runtime };
}
