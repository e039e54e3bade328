/**
 * The function bundles and dist/, quietly (lib/build-quietly.ts): what `npm run bench` runs before the
 * parts that need them. npm start, npm run chaos and bench:local-pipeline build through build-first.ts,
 * after checking their command line.
 */
import { join } from "node:path";
import { buildQuietly } from "./lib/build-quietly.ts";

const built = await buildQuietly(join(import.meta.dirname, ".."));
if (!built.ok) {
  process.stderr.write(`${built.output}\n`);
  process.exit(built.code);
}
