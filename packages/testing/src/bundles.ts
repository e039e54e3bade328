import { mkdtemp, readFile, rename, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Artifact, artifactOf, bundleFunction, manifestJson } from "@mcp-pipeline/bundler";

/** Every function folder under functions/, as `npm run build` bundles them. */
export const FUNCTIONS = ["processor", "tool-worker", "fifo-worker", "dlq-redrive"] as const;

/**
 * Bundles every function (or those named) into a fresh directory laid out like dist/: <name>.zip side
 * by side, and manifest.json as `npm run build` writes it (the local runtime runs each zip with its
 * handler and runtime).
 */
export async function bundleAll(names: readonly (typeof FUNCTIONS)[number][] = FUNCTIONS): Promise<string> {
  const dist = await mkdtemp(join(tmpdir(), "local-dist-"));
  const artifacts: Record<string, Artifact> = {};
  for (const name of names) {
    const out = join(dist, name);
    await bundleFunction(join(import.meta.dirname, "../../../functions", name), out);
    await rename(join(out, `${name}.zip`), join(dist, `${name}.zip`));
    artifacts[name] = artifactOf(await readFile(join(dist, `${name}.zip`)), `dist/${name}.zip`);
  }
  await writeFile(join(dist, "manifest.json"), manifestJson(artifacts));
  return dist;
}
