import { mkdtemp, rename } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundleFunction } from "@mcp-pipeline/bundler";

/** Every function folder under functions/, as `npm run build` bundles them. */
export const FUNCTIONS = ["processor", "tool-worker", "fifo-worker", "dlq-redrive"] as const;

/**
 * Bundles every function (or those named) into a fresh directory laid out like dist/: <name>.zip side
 * by side.
 */
export async function bundleAll(names: readonly (typeof FUNCTIONS)[number][] = FUNCTIONS): Promise<string> {
  const dist = await mkdtemp(join(tmpdir(), "local-dist-"));
  for (const name of names) {
    const out = join(dist, name);
    await bundleFunction(join(import.meta.dirname, "../../../functions", name), out);
    await rename(join(out, `${name}.zip`), join(dist, `${name}.zip`));
  }
  return dist;
}
