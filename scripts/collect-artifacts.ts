/** `npm run build`'s last step: every function's zip into dist/ with dist/manifest.json (artifacts.ts). */
import { join } from "node:path";
import { collectArtifacts } from "./lib/artifacts.ts";

const artifacts = await collectArtifacts(join(import.meta.dirname, ".."));
for (const [name, a] of Object.entries(artifacts))
  console.log(`${a.path}  ${a.sizeBytes} bytes  sha256=${a.sha256}  (${name})`);
