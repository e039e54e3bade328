/**
 * `npm run generate:validators`: writes packages/tools/src/input-validators.generated.{js,d.ts}, the
 * workers' argument validators compiled from every tool's inputSchema (scripts/lib/standalone-validators.ts).
 * Run it after adding a tool or changing a schema; a worker refuses to start with a tool whose schema is
 * not the one its validator was compiled from, and scripts/test/integration/tool-validators.test.ts fails.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { allTools } from "../packages/tools/src/catalogue.ts";
import { DECLARATIONS, standaloneValidatorsModule } from "./lib/standalone-validators.ts";

const root = join(import.meta.dirname, "..");
const out = join(root, "packages/tools/src/input-validators.generated");
await writeFile(`${out}.js`, await standaloneValidatorsModule(allTools(), root));
await writeFile(`${out}.d.ts`, DECLARATIONS);
console.log(`wrote ${out}.js and .d.ts (${allTools().length} tools)`);
