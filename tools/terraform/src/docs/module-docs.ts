/**
 * Writes the inputs and outputs tables of every module's README between BEGIN_TF_DOCS and END_TF_DOCS
 * (terraform-docs' markers), and each function README's environment table (function-readmes.ts).
 * `npm run docs:terraform` updates them; a test fails when one is stale.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { body, expression, names, parseDirectory, TERRAFORM_ROOT } from "@mcp-pipeline/terraform";
import {
  configSchema,
  environmentTable,
  FUNCTIONS,
  type FunctionKey,
  readDeclaration,
  readmePath,
  withEnvironmentTable,
} from "./function-readmes.js";

export const BEGIN = "<!-- BEGIN_TF_DOCS -->";
export const END = "<!-- END_TF_DOCS -->";

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n\s*/g, " ");

export async function moduleDocs(dir: string): Promise<string> {
  const config = await parseDirectory(dir);
  const inputs = names(config, "variable").map((name) => {
    const v = body(config, "variable", name) ?? {};
    const type = expression(v.type ?? "any").replace(/\s+/g, " ");
    const required = !("default" in v);
    const fallback = required ? "required" : `\`${cell(JSON.stringify(v.default))}\``;
    return `| \`${name}\` | \`${cell(type)}\` | ${fallback} | ${cell(String(v.description ?? ""))} |`;
  });
  const outputs = names(config, "output").map((name) => {
    const o = body(config, "output", name) ?? {};
    return `| \`${name}\` | ${cell(String(o.description ?? ""))} |`;
  });
  return [
    BEGIN,
    ...(await environmentDocs(dir)),
    "## Inputs",
    "",
    "| Name | Type | Default | Description |",
    "| ---- | ---- | ------- | ----------- |",
    ...inputs,
    "",
    "## Outputs",
    "",
    "| Name | Description |",
    "| ---- | ----------- |",
    ...outputs,
    END,
  ].join("\n");
}

interface EnvironmentDeclaration {
  readonly sources: Readonly<
    Record<string, { readonly description: string; readonly min?: number; readonly max?: number }>
  >;
  readonly functions: Readonly<
    Record<
      string,
      {
        readonly tuning: Readonly<
          Record<string, { variable: string; min: number; max: number; default: number; description: string }>
        >;
        readonly wired: Readonly<Record<string, string>>;
      }
    >
  >;
}

/** The table of each function's environment, from the module's function-environment.json (the pipeline's). */
async function environmentDocs(dir: string): Promise<string[]> {
  const file = join(dir, "function-environment.json");
  if (!existsSync(file)) return [];
  const declaration = JSON.parse(await readFile(file, "utf8")) as EnvironmentDeclaration;
  const range = (s: { min?: number; max?: number }) => (s.min === undefined ? "" : ` (${s.min}-${s.max})`);
  const rows = Object.entries(declaration.functions).flatMap(([fn, f]) => [
    ...Object.entries(f.tuning).map(
      ([field, t]) =>
        `| ${fn} | \`${t.variable}\` | setting \`${fn}.${field}\`${range(t)}, default ${t.default} | ${cell(t.description)} |`,
    ),
    ...Object.entries(f.wired).map(([variable, source]) => {
      const s = declaration.sources[source];
      return `| ${fn} | \`${variable}\` | \`${source}\`${s ? range(s) : ""} | ${cell(s?.description ?? "")} |`;
    }),
  ]);
  return [
    "## Function environments",
    "",
    "Generated from `function-environment.json`, the one declaration main.tf, the settings and the local pipeline read.",
    "",
    "| Function | Variable | Set from | Description |",
    "| -------- | -------- | -------- | ----------- |",
    ...rows,
    "",
  ];
}

export function withDocs(readme: string, docs: string): string {
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (start === -1 || end === -1) return `${readme.trimEnd()}\n\n${docs}\n`;
  return `${readme.slice(0, start)}${docs}${readme.slice(end + END.length)}`;
}

export const MODULES = [
  "alarms",
  "bucket",
  "function",
  "kinesis-esm",
  "pipeline",
  "queue",
  "sqs-esm",
  "stream",
  "table",
];

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const module of MODULES) {
    const dir = join(TERRAFORM_ROOT, "modules", module);
    const file = join(dir, "README.md");
    const readme = await readFile(file, "utf8").catch(() => `# ${basename(dir)}\n`);
    await writeFile(file, withDocs(readme, await moduleDocs(dir)));
    process.stdout.write(`${file}\n`);
  }
  const declaration = await readDeclaration();
  for (const fn of Object.keys(FUNCTIONS) as FunctionKey[]) {
    const file = readmePath(fn);
    const table = environmentTable(declaration, fn, await configSchema(fn));
    await writeFile(file, withEnvironmentTable(await readFile(file, "utf8"), table));
    process.stdout.write(`${file}\n`);
  }
}
