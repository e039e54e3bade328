/**
 * Gathers every function's zip into dist/ and writes dist/manifest.json for Terraform and the deploy
 * workflow: artifact path, size and base64 SHA-256 (Terraform's filebase64sha256). The manifest holds
 * no timestamps, so the same sources give the same manifest.
 */
import { copyFile, mkdir, readdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { base64Sha256 } from "@mcp-pipeline/bundler";

const root = join(import.meta.dirname, "..");
const dist = join(root, "dist");
await rm(dist, { recursive: true, force: true });
await mkdir(dist, { recursive: true });

const functions = (await readdir(join(root, "functions"), { withFileTypes: true }))
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

const artifacts: Record<
  string,
  { path: string; sizeBytes: number; sha256: string; handler: string; runtime: string }
> = {};
for (const name of functions) {
  const built = join(root, "functions", name, "dist");
  const zip = join(built, `${name}.zip`);
  await mkdir(join(dist, name), { recursive: true });
  await copyFile(zip, join(dist, `${name}.zip`));
  // The source maps of index.mjs and of its chunks, and the metafile.
  for (const extra of (await readdir(built)).filter((f) => f.endsWith(".mjs.map") || f === "meta.json"))
    await copyFile(join(built, extra), join(dist, name, extra));
  artifacts[name] = {
    path: `dist/${name}.zip`,
    sizeBytes: (await stat(zip)).size,
    sha256: await base64Sha256(zip),
    handler: "index.handler",
    runtime: "nodejs22.x",
  };
}

await writeFile(join(dist, "manifest.json"), `${JSON.stringify({ formatVersion: 1, artifacts }, null, 2)}\n`);
for (const [name, a] of Object.entries(artifacts))
  console.log(`${a.path}  ${a.sizeBytes} bytes  sha256=${a.sha256}  (${name})`);
