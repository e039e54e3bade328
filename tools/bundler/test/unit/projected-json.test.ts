import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  declarationFor,
  type FunctionEnvironmentDeclaration,
  packageInfoFor,
} from "../../src/projected-json.js";

// What a bundle holds of the JSON files its code imports whole (src/projected-json.ts):
// scripts/test/integration/build.test.ts runs the bundles that read them.

const root = join(import.meta.dirname, "../../../..");
const declaration = JSON.parse(
  await readFile(join(root, "terraform/modules/pipeline/function-environment.json"), "utf8"),
) as FunctionEnvironmentDeclaration;

describe("function-environment.json in a function's bundle", () => {
  it.each(Object.keys(declaration.functions))(
    "%s: its own tuning, with every variable, range and default",
    (fn) => {
      const projected = declarationFor(declaration, fn);
      expect(Object.keys(projected.functions)).toEqual([fn]);
      const own = declaration.functions[fn]?.tuning ?? {};
      expect(Object.keys(projected.functions[fn]?.tuning ?? {})).toEqual(Object.keys(own));
      for (const [field, { description, ...rest }] of Object.entries(own)) {
        expect(typeof description).toBe("string");
        expect(projected.functions[fn]?.tuning[field]).toEqual(rest);
      }
    },
  );

  it("the sources keep their ranges (MAX_RECEIVE_COUNT's) and lose their descriptions", () => {
    const projected = declarationFor(declaration, "tool_worker");
    expect(projected.sources["queue.max_receive_count"]).toEqual({ min: 1, max: 1000 });
    expect(Object.keys(projected.sources)).toEqual(Object.keys(declaration.sources));
    expect(JSON.stringify(projected)).not.toContain("description");
    expect(JSON.stringify(projected)).not.toContain("wired");
  });

  it("a function the file does not declare (the bench's equivalent) gets no function part", () => {
    expect(declarationFor(declaration, "powertools_processor").functions).toEqual({});
  });

  it("is a fraction of the file", () => {
    const whole = JSON.stringify(declaration).length;
    for (const fn of Object.keys(declaration.functions)) {
      expect(JSON.stringify(declarationFor(declaration, fn)).length).toBeLessThan(whole / 4);
    }
  });
});

describe("an AWS SDK package's package.json in a bundle", () => {
  it("keeps its name and version", async () => {
    const pkg = JSON.parse(
      await readFile(join(root, "node_modules/@aws-sdk/client-s3/package.json"), "utf8"),
    );
    expect(packageInfoFor(pkg)).toEqual({ name: "@aws-sdk/client-s3", version: pkg.version });
  });

  it("is read for its version alone by every SDK module that imports one", async () => {
    // The projection holds only while the SDK reads nothing else: a new field read would be undefined in a
    // bundle, so a module that reads one fails this test when the SDK is upgraded.
    const sdk = join(root, "node_modules/@aws-sdk");
    const reads: string[] = [];
    let importers = 0;
    for (const entry of await readdir(sdk, { recursive: true })) {
      if (!entry.endsWith(".js") || !entry.includes("dist-es")) continue;
      const source = await readFile(join(sdk, entry), "utf8");
      for (const [, name] of source.matchAll(/^import (\w+) from "[./]+\/package\.json";$/gm)) {
        importers += 1;
        for (const [use] of source.matchAll(
          new RegExp(`\\b${name}\\b(?!\\.version\\b)(?! from)[^\\n]{0,20}`, "g"),
        )) {
          reads.push(`${entry}: ${use}`);
        }
      }
    }
    expect(importers).toBeGreaterThan(4);
    expect(reads).toEqual([]);
  });
});
