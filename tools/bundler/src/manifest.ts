/**
 * dist/manifest.json: what `npm run build` writes beside the zips (scripts/lib/artifacts.ts), what Terraform
 * deploys (each function's `handler`, `runtime` and `source_code_hash` come from it) and what the local
 * runtime runs (local/runtime reads the handler and the runtime from it, and holds each zip to its
 * hash). No imports beyond Node's: the local runtime reads it without loading esbuild.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";

export const MANIFEST_FORMAT = 1;
/** Every bundle's entry: index.mjs exports `handler` (bundle-function.ts). */
export const FUNCTION_HANDLER = "index.handler";
/** The Lambda runtime the bundles are built for (esbuild's target is node22). */
export const FUNCTION_RUNTIME = "nodejs22.x";

export interface Artifact {
  /** The zip, relative to the directory Terraform's repository_root names (`dist/<function>.zip`). */
  readonly path: string;
  readonly sizeBytes: number;
  /** Base64 SHA-256 of the zip: Terraform's filebase64sha256. */
  readonly sha256: string;
  readonly handler: string;
  readonly runtime: string;
}

export interface Manifest {
  readonly formatVersion: typeof MANIFEST_FORMAT;
  readonly artifacts: Readonly<Record<string, Artifact>>;
}

/** The base64 SHA-256 of bytes, as Terraform's filebase64sha256 gives it for a file. */
export const base64Sha256Of = (bytes: Uint8Array): string =>
  createHash("sha256").update(bytes).digest("base64");

/** A function's entry for the zip `zip` found at `path`. */
export function artifactOf(zip: Uint8Array, path: string): Artifact {
  return {
    path,
    sizeBytes: zip.byteLength,
    sha256: base64Sha256Of(zip),
    handler: FUNCTION_HANDLER,
    runtime: FUNCTION_RUNTIME,
  };
}

/** The manifest's text: no timestamps, so the same zips give the same bytes. */
export function manifestJson(artifacts: Readonly<Record<string, Artifact>>): string {
  return `${JSON.stringify({ formatVersion: MANIFEST_FORMAT, artifacts }, null, 2)}\n`;
}

/** A manifest that cannot be read or is not what the build writes; `problem` says what. */
export class ManifestError extends Error {
  readonly file: string;
  readonly problem: string;
  constructor(file: string, problem: string, options?: ErrorOptions) {
    super(`${file}: ${problem}`, options);
    this.name = "ManifestError";
    this.file = file;
    this.problem = problem;
  }
}

const FIELDS = ["path", "sizeBytes", "sha256", "handler", "runtime"] as const;

/** Reads and checks `dir`/manifest.json. */
export async function readManifest(dir: string): Promise<Manifest> {
  const file = join(dir, "manifest.json");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new ManifestError(file, `cannot be read (${(error as Error).message}): run \`npm run build\``, {
      cause: error,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ManifestError(file, `not JSON: ${(error as Error).message}`, { cause: error });
  }
  const manifest = json as { formatVersion?: unknown; artifacts?: unknown };
  if (manifest?.formatVersion !== MANIFEST_FORMAT)
    throw new ManifestError(
      file,
      `formatVersion must be ${MANIFEST_FORMAT}, got ${String(manifest?.formatVersion)}`,
    );
  if (typeof manifest.artifacts !== "object" || manifest.artifacts === null)
    throw new ManifestError(file, "artifacts must be an object of the functions' entries");
  for (const [name, entry] of Object.entries(manifest.artifacts as Record<string, unknown>)) {
    for (const field of FIELDS) {
      const value = (entry as Record<string, unknown> | null)?.[field];
      const ok = field === "sizeBytes" ? Number.isInteger(value) : typeof value === "string" && value !== "";
      if (!ok)
        throw new ManifestError(
          file,
          `artifacts.${name}.${field} is missing or not a ${field === "sizeBytes" ? "whole number" : "string"}`,
        );
    }
  }
  return manifest as Manifest;
}
