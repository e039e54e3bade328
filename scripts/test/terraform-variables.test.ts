// The Terraform variables that take the settings are generated from the settings schema
// (scripts/terraform/settings-variables.ts): stale files fail here, as the module docs and the tools'
// validators do. Run `npm run generate:terraform-variables` after changing packages/settings.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { environmentSettingsSchema, loadSettings } from "@mcp-pipeline/settings";
import { body, names, parseDirectory, TERRAFORM_ROOT } from "@mcp-pipeline/terraform-hcl";
import { describe, expect, it } from "vitest";
import { GENERATED_FILES, settingsVariables } from "../terraform/settings-variables.ts";

describe("the Terraform variables generated from the settings schema", () => {
  it.each(Object.keys(GENERATED_FILES) as (keyof typeof GENERATED_FILES)[])(
    "%s: the file is what the generator makes of the schema now (npm run generate:terraform-variables)",
    async (target) => {
      expect(await readFile(GENERATED_FILES[target], "utf8")).toBe(settingsVariables(target));
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
    for (const name of settings) expect(body(pipeline, "variable", name)?.validation, name).toBeDefined();
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
