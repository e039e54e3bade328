import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { allTools } from "../../../packages/tools/src/catalogue.ts";
import { DECLARATIONS, standaloneValidatorsModule } from "../../lib/standalone-validators.ts";

const root = join(import.meta.dirname, "../../..");
const generated = join(root, "packages/tools/src/input-validators.generated");

describe("the workers' validators compiled at build time (npm run generate:validators)", () => {
  it("are what the generator makes of the tools as they are now (run npm run generate:validators if not)", async () => {
    expect(await readFile(`${generated}.js`, "utf8")).toBe(
      await standaloneValidatorsModule(allTools(), root),
    );
    expect(await readFile(`${generated}.d.ts`, "utf8")).toBe(DECLARATIONS);
  });

  it("are generated identically twice", async () => {
    const [a, b] = await Promise.all([
      standaloneValidatorsModule(allTools(), root),
      standaloneValidatorsModule(allTools(), root),
    ]);
    expect(a).toBe(b);
  });

  it("are one self-contained module: Ajv's run-time helpers are bundled in, nothing is imported", async () => {
    expect(await readFile(`${generated}.js`, "utf8")).not.toMatch(/^\s*import\s/m);
  });
});
