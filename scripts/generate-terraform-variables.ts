/**
 * `npm run generate:terraform-variables`: writes the Terraform variables that take the settings, generated
 * from the settings schema (scripts/terraform/settings-variables.ts). Run it after changing
 * packages/settings/src/schema.ts or tuning.ts; scripts/test/terraform-variables.test.ts fails until then.
 */
import { writeFile } from "node:fs/promises";
import { GENERATED_FILES, settingsVariables } from "./terraform/settings-variables.ts";

for (const [target, file] of Object.entries(GENERATED_FILES) as [keyof typeof GENERATED_FILES, string][]) {
  await writeFile(file, settingsVariables(target));
  console.log(`wrote ${file}`);
}
