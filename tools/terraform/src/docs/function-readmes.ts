/**
 * Writes each function README's environment table between BEGIN_ENV_DOCS and END_ENV_DOCS from the one
 * declaration of each function's environment (terraform/modules/pipeline/function-environment.json: what
 * sets each variable, its range and what it is for) and the function's config.ts (its default: parsed
 * alone, as the function reads an absent variable). `npm run docs:terraform` updates them; a test fails
 * when one is stale, and the generation refuses a variable that one of the two has and the other not.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { TERRAFORM_ROOT } from "../hcl.js";

const ROOT = join(TERRAFORM_ROOT, "..");

export const ENV_BEGIN = "<!-- BEGIN_ENV_DOCS -->";
export const ENV_END = "<!-- END_ENV_DOCS -->";

/** The function folders, by their key in the declaration. */
export const FUNCTIONS = {
  processor: "processor",
  tool_worker: "tool-worker",
  fifo_worker: "fifo-worker",
  dlq_redrive: "dlq-redrive",
} as const;
export type FunctionKey = keyof typeof FUNCTIONS;

interface Declaration {
  readonly sources: Readonly<Record<string, { readonly description: string; min?: number; max?: number }>>;
  readonly functions: Readonly<
    Record<
      FunctionKey,
      {
        readonly tuning: Readonly<
          Record<string, { variable: string; min: number; max: number; description: string }>
        >;
        readonly wired: Readonly<Record<string, string>>;
        readonly defaulted: Readonly<Record<string, string>>;
      }
    >
  >;
}

/** What the generator needs of a function's light-schema config: its fields, each parseable alone. */
interface ConfigSchema {
  readonly shape: Readonly<Record<string, { parse(value: unknown): unknown }>>;
}

export class EnvironmentDocsError extends Error {
  readonly fn: FunctionKey;
  readonly variables: readonly string[];

  constructor(fn: FunctionKey, message: string, variables: readonly string[]) {
    super(`functions/${FUNCTIONS[fn]}: ${message}: ${variables.join(", ")}`);
    this.name = "EnvironmentDocsError";
    this.fn = fn;
    this.variables = variables;
  }
}

export async function readDeclaration(): Promise<Declaration> {
  const file = join(ROOT, "terraform/modules/pipeline/function-environment.json");
  return JSON.parse(await readFile(file, "utf8")) as Declaration;
}

/** The `*ConfigSchema` export of a function's config.ts (side-effect free, importable by tools). */
export async function configSchema(fn: FunctionKey): Promise<ConfigSchema> {
  const file = join(ROOT, "functions", FUNCTIONS[fn], "src", "config.ts");
  const module = (await import(file)) as Record<string, unknown>;
  const schemas = Object.entries(module).filter(([key]) => key.endsWith("ConfigSchema"));
  if (schemas.length !== 1) throw new Error(`${file}: ${schemas.length} *ConfigSchema exports`);
  return (schemas[0] as [string, ConfigSchema])[1];
}

/** What the function makes of the variable absent: `required`, `unset` or its default. */
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

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n\s*/g, " ");
const range = (s: { min?: number; max?: number }) => (s.min === undefined ? "" : ` (${s.min}-${s.max})`);

/** Each variable the declaration names for `fn`: what sets it and what it is for. */
function declared(
  declaration: Declaration,
  fn: FunctionKey,
): Map<string, { setBy: string; description: string }> {
  const f = declaration.functions[fn];
  const rows = new Map<string, { setBy: string; description: string }>();
  for (const [field, t] of Object.entries(f.tuning))
    rows.set(t.variable, { setBy: `setting \`${fn}.${field}\`${range(t)}`, description: t.description });
  for (const [variable, source] of Object.entries(f.wired)) {
    const s = declaration.sources[source];
    rows.set(variable, { setBy: `\`${source}\`${s ? range(s) : ""}`, description: s?.description ?? "" });
  }
  for (const [variable, description] of Object.entries(f.defaulted))
    rows.set(variable, { setBy: `default, or setting \`${fn}.environment\``, description });
  return rows;
}

/** A markdown table with its columns padded to one width, as the formatter (biome) writes one. */
function alignedTable(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => (row[i] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)];
}

/** The generated block of `fn`'s README, in the order its config.ts reads the variables. */
export function environmentTable(declaration: Declaration, fn: FunctionKey, schema: ConfigSchema): string {
  const declaredRows = declared(declaration, fn);
  const read = Object.keys(schema.shape);
  const undeclared = read.filter((variable) => !declaredRows.has(variable));
  if (undeclared.length > 0)
    throw new EnvironmentDocsError(
      fn,
      "read by src/config.ts but not in function-environment.json",
      undeclared,
    );
  const unread = [...declaredRows.keys()].filter((variable) => !read.includes(variable));
  if (unread.length > 0)
    throw new EnvironmentDocsError(fn, "in function-environment.json but not read by src/config.ts", unread);
  const rows = Object.entries(schema.shape).map(([variable, field]) => {
    const row = declaredRows.get(variable) as { setBy: string; description: string };
    return [`\`${variable}\``, defaultOf(field), row.setBy, cell(row.description)];
  });
  return [
    ENV_BEGIN,
    `Generated by \`npm run docs:terraform\` from terraform/modules/pipeline/function-environment.json (what sets each variable) and \`src/config.ts\` (the default).`,
    "",
    ...alignedTable(["Variable", "Default", "Set from", "Description"], rows),
    ENV_END,
  ].join("\n");
}

export function withEnvironmentTable(readme: string, table: string): string {
  const start = readme.indexOf(ENV_BEGIN);
  const end = readme.indexOf(ENV_END);
  if (start === -1 || end === -1) throw new Error(`no ${ENV_BEGIN} ... ${ENV_END} block`);
  return `${readme.slice(0, start)}${table}${readme.slice(end + ENV_END.length)}`;
}

export const readmePath = (fn: FunctionKey) => join(ROOT, "functions", FUNCTIONS[fn], "README.md");
