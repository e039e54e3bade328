// A function's README lists its environment with each default (functions/<name>/README.md, "Environment");
// the defaults are declared once, in functions/<name>/src/config.ts. This holds the table to the schema:
// the same variables, and each default as the schema gives it (a field parsed alone, as lint-config reads
// DEADLINE_MARGIN_MS), so the README cannot drift from the code.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../../..");
const functions = readdirSync(join(root, "functions"), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name);

/** What the test needs of a light-schema object: its fields, each parseable alone. */
interface ConfigSchema {
  readonly shape: Readonly<Record<string, { parse(value: unknown): unknown }>>;
}

/** The `*ConfigSchema` export of a function's config.ts (side-effect free, importable by tools). */
async function configSchema(name: string): Promise<ConfigSchema> {
  const module = (await import(join(root, "functions", name, "src", "config.ts"))) as Record<string, unknown>;
  const schemas = Object.entries(module).filter(([key]) => key.endsWith("ConfigSchema"));
  if (schemas.length !== 1)
    throw new Error(`functions/${name}/src/config.ts: ${schemas.length} *ConfigSchema exports`);
  return (schemas[0] as [string, ConfigSchema])[1];
}

/** What a README's table says of a field absent from the environment: `required`, `unset` or the default. */
function defaultOf(field: { parse(value: unknown): unknown }): string {
  let value: unknown;
  try {
    value = field.parse(undefined);
  } catch {
    return "required";
  }
  // An optional field parsed alone gives the field rules' own marker for "absent" (a symbol), not a value.
  return value === undefined || typeof value === "symbol" ? "unset" : String(value);
}

/** `| \`NAME\` | default | ... |` rows of the README's environment table. */
function environmentTable(readme: string): Map<string, string> {
  const rows = new Map<string, string>();
  for (const [, name, fallback] of readme.matchAll(/^\| `([A-Z][A-Z0-9_]*)`\s*\|\s*([^|]*?)\s*\|/gm))
    rows.set(name as string, fallback as string);
  return rows;
}

describe("function READMEs: the environment table is the config schema's", () => {
  it("finds the four functions", () => {
    expect(functions).toEqual(
      expect.arrayContaining(["processor", "tool-worker", "fifo-worker", "dlq-redrive"]),
    );
  });

  it.each(functions)("%s", async (name) => {
    const schema = await configSchema(name);
    const table = environmentTable(readFileSync(join(root, "functions", name, "README.md"), "utf8"));
    const fromSchema = Object.fromEntries(
      Object.entries(schema.shape).map(([key, field]) => [key, defaultOf(field)]),
    );
    expect(Object.fromEntries(table)).toEqual(fromSchema);
  });

  it.each(functions)("%s: a range the table states, as `(min-max)`, is the field's", async (name) => {
    const schema = await configSchema(name);
    const readme = readFileSync(join(root, "functions", name, "README.md"), "utf8");
    const accepts = (field: { parse(value: unknown): unknown }, value: number) => {
      try {
        field.parse(String(value));
        return true;
      } catch {
        return false;
      }
    };
    for (const [, variable, min, max] of readme.matchAll(
      /^\| `([A-Z][A-Z0-9_]*)`\s*\|[^|]*\|[^|\n]*\((\d+)-(\d+)\)[^|\n]*\|/gm,
    )) {
      const field = schema.shape[variable as string];
      expect(field, `${variable} is in the schema`).toBeDefined();
      if (!field) continue;
      const [low, high] = [Number(min), Number(max)];
      expect(
        [low - 1, low, high, high + 1].map((v) => accepts(field, v)),
        `${variable}: ${low - 1} refused, ${low} and ${high} accepted, ${high + 1} refused`,
      ).toEqual([false, true, true, false]);
    }
  });

  it("reads a table row's variable and default", () => {
    const table = environmentTable(
      "| Variable | Default | |\n| --- | --- | --- |\n| `A_B` | required | x |\n| `C`   | 5000     | y |\n",
    );
    expect(Object.fromEntries(table)).toEqual({ A_B: "required", C: "5000" });
  });
});
