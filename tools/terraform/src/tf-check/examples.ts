/**
 * The modules' examples (terraform/modules/<module>/examples/<example>): small roots a user copies from. The
 * check validates each one (init without a backend, then validate: nothing applied), so an example that no
 * longer matches its module's inputs fails CI rather than the user who copies it.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";

/** `<module>/examples/<example>` for every example under `modulesDir`, sorted. */
export async function moduleExamples(modulesDir: string): Promise<string[]> {
  const examples: string[] = [];
  for (const module of await readdir(modulesDir, { withFileTypes: true })) {
    if (!module.isDirectory()) continue;
    const dir = join(modulesDir, module.name, "examples");
    const entries = await readdir(dir, { withFileTypes: true }).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    });
    for (const example of entries)
      if (example.isDirectory()) examples.push(`${module.name}/examples/${example.name}`);
  }
  return examples.sort();
}
