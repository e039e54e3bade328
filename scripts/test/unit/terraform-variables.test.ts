// The Terraform variables that take the settings are generated from the settings schema
// (tools/terraform/src/docs/settings-variables.ts): stale files fail here, as the module docs and the tools'
// validators do. Run `npm run generate:terraform-variables` after changing packages/settings.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { environmentSettingsSchema, loadSettings } from "@mcp-pipeline/settings";
import { body, expression, names, parseDirectory, TERRAFORM_ROOT } from "@mcp-pipeline/terraform";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  BEGIN_MARKER,
  GENERATED_FILES,
  settingsVariables,
  withSettingsVariables,
} from "../../../tools/terraform/src/docs/settings-variables.ts";

interface JsonNode {
  readonly type?: string;
  readonly anyOf?: readonly JsonNode[];
  readonly properties?: Readonly<Record<string, JsonNode>>;
}

describe("the Terraform variables generated from the settings schema", () => {
  it.each(Object.keys(GENERATED_FILES) as (keyof typeof GENERATED_FILES)[])(
    "%s: the file is what the generator makes of the schema now (npm run generate:terraform-variables)",
    async (target) => {
      const file = await readFile(GENERATED_FILES[target], "utf8");
      expect(file).toContain(BEGIN_MARKER);
      expect(file).toBe(withSettingsVariables(file, target));
    },
  );

  it("declare every top-level setting once, in the pipeline module and in both roots", async () => {
    const settings = Object.keys(environmentSettingsSchema.shape).sort();
    const pipeline = await parseDirectory(join(TERRAFORM_ROOT, "modules", "pipeline"));
    expect(names(await parseDirectory(GENERATED_FILES.pipeline.replace(/\/[^/]+$/, "")), "variable")).toEqual(
      expect.arrayContaining(settings),
    );
    for (const env of ["dev", "prod"]) {
      const root = await parseDirectory(join(TERRAFORM_ROOT, "environments", env));
      expect(names(root, "variable"), env).toEqual(expect.arrayContaining(settings));
      // The roots type them only: the module validates.
      for (const name of settings) expect(body(root, "variable", name)?.validation, name).toBeUndefined();
    }
    // A bool has nothing to validate beyond its type; every other setting has a range, an enum or a pattern.
    const ranged = settings.filter((n) => expression(body(pipeline, "variable", n)?.type) !== "bool");
    expect(settings.filter((n) => !ranged.includes(n))).toEqual(["test_tools"]);
    for (const name of ranged) expect(body(pipeline, "variable", name)?.validation, name).toBeDefined();
  });

  it("a whole number in the schema is refused fractional in Terraform too", () => {
    const text = settingsVariables("pipeline");
    const json = z.toJSONSchema(environmentSettingsSchema, { io: "input" }) as JsonNode;
    const integers: string[] = [];
    const walk = (node: JsonNode, ref: string) => {
      const options = node.anyOf?.filter((o) => o.type !== "null") ?? [node];
      for (const option of options) {
        if (option.type === "integer") integers.push(ref);
        for (const [key, child] of Object.entries(option.properties ?? {})) walk(child, `${ref}.${key}`);
      }
    };
    for (const [name, node] of Object.entries(json.properties ?? {})) walk(node, `var.${name}`);
    expect(integers).toContain("var.tool_worker.concurrency");
    for (const ref of integers) expect(text, ref).toContain(`floor(${ref}) == ${ref}`);
  });

  it("a tuning field left out gets the schema's default in Terraform too", async () => {
    const text = await readFile(GENERATED_FILES.pipeline, "utf8");
    const dev = await loadSettings(join(TERRAFORM_ROOT, ".."), "dev");
    const defaults = environmentSettingsSchema.shape.dlq_redrive.parse({
      ...dev.dlq_redrive,
      concurrency: undefined,
      deadline_margin_ms: undefined,
    });
    expect(text).toContain(`concurrency                = optional(number, ${defaults.concurrency})`);
    expect(text).toContain(`deadline_margin_ms         = optional(number, ${defaults.deadline_margin_ms})`);
  });
});
