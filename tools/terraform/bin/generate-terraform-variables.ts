/**
 * `npm run generate:terraform-variables`: writes the Terraform variables that take the settings (the marked part of variables.tf), generated
 * from the settings schema (tools/terraform/src/docs/settings-variables.ts). Run it after changing
 * packages/settings/src/schema.ts or terraform/modules/pipeline/function-environment.json;
 * scripts/test/unit/terraform-variables.test.ts fails until then.
 */
import { readFile, writeFile } from "node:fs/promises";
import { GENERATED_FILES, withSettingsVariables } from "../src/docs/settings-variables.ts";

for (const [target, file] of Object.entries(GENERATED_FILES) as [keyof typeof GENERATED_FILES, string][]) {
  await writeFile(file, withSettingsVariables(await readFile(file, "utf8"), target));
  console.log(`wrote ${file}`);
}
