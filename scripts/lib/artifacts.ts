/**
 * Gathers every function's zip into dist/ and writes dist/manifest.json for Terraform and the deploy
 * workflow: artifact path, size and base64 SHA-256 (Terraform's filebase64sha256). The manifest holds
 * no timestamps, so the same sources give the same manifest. Used by collect-artifacts.ts (`npm run
 * build`) and, in its own process, by lib/build-quietly.ts (`npm start`, `npm run chaos`, `npm run bench`),
 * which spares a process start.
 */
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Artifact, artifactOf, manifestJson } from "@mcp-pipeline/bundler";

export type { Artifact } from "@mcp-pipeline/bundler";

/** Collects functions/<name>/dist into `root`/dist; returns the manifest's artifacts by function. */
export async function collectArtifacts(root: string): Promise<Readonly<Record<string, Artifact>>> {
  const dist = join(root, "dist");
  await rm(dist, { recursive: true, force: true });
  await mkdir(dist, { recursive: true });

  const functions = (await readdir(join(root, "functions"), { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();

  const artifacts: Record<string, Artifact> = {};
  for (const name of functions) {
    const built = join(root, "functions", name, "dist");
    const zip = join(built, `${name}.zip`);
    await mkdir(join(dist, name), { recursive: true });
    await copyFile(zip, join(dist, `${name}.zip`));
    // The source maps of index.mjs and of its chunks, and the metafile.
    for (const extra of (await readdir(built)).filter((f) => f.endsWith(".mjs.map") || f === "meta.json"))
      await copyFile(join(built, extra), join(dist, name, extra));
    artifacts[name] = artifactOf(await readFile(zip), `dist/${name}.zip`);
  }

  await writeFile(join(dist, "manifest.json"), manifestJson(artifacts));
  return artifacts;
}
