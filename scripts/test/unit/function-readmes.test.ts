// Each function README's environment table is generated (`npm run docs:terraform`) from the one
// declaration of each function's environment, terraform/modules/pipeline/function-environment.json, and
// the function's config.ts (the defaults): this checks that the committed page is the generated one.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as docs from "../../../tools/terraform/src/docs/function-readmes.ts";

const root = join(import.meta.dirname, "../../..");
const keys = Object.keys(docs.FUNCTIONS) as docs.FunctionKey[];

describe("function READMEs: the environment table is generated from the declaration", () => {
  it("knows every function folder", () => {
    const folders = readdirSync(join(root, "functions"), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(Object.values(docs.FUNCTIONS).sort()).toEqual(folders.sort());
  });

  it.each(keys)("%s: the committed table is current (npm run docs:terraform)", async (fn) => {
    const readme = readFileSync(docs.readmePath(fn), "utf8");
    const table = docs.environmentTable(await docs.readDeclaration(), fn, await docs.configSchema(fn));
    expect(readme).toBe(docs.withEnvironmentTable(readme, table));
  });

  it("refuses a variable the function reads that the declaration does not name", async () => {
    const declaration = await docs.readDeclaration();
    const schema = await docs.configSchema("tool_worker");
    const { HTTP_TOOL_TIMEOUT_MS: _, ...defaulted } = declaration.functions.tool_worker.defaulted;
    const without = {
      ...declaration,
      functions: {
        ...declaration.functions,
        tool_worker: { ...declaration.functions.tool_worker, defaulted },
      },
    };
    expect(() => docs.environmentTable(without, "tool_worker", schema)).toThrow(
      expect.objectContaining({ name: "EnvironmentDocsError", variables: ["HTTP_TOOL_TIMEOUT_MS"] }),
    );
  });

  it("refuses a declared variable the function does not read", async () => {
    const declaration = await docs.readDeclaration();
    const schema = await docs.configSchema("processor");
    const processor = declaration.functions.processor;
    const extra = {
      ...declaration,
      functions: { ...declaration.functions, processor: { ...processor, defaulted: { NOT_READ: "x" } } },
    };
    expect(() => docs.environmentTable(extra, "processor", schema)).toThrow(
      expect.objectContaining({ name: "EnvironmentDocsError", variables: ["NOT_READ"] }),
    );
  });

  it("a README without the markers is an error, not a silently appended table", () => {
    expect(() => docs.withEnvironmentTable("# f\n", "table")).toThrow(/BEGIN_ENV_DOCS/);
  });
});
