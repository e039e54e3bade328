/** Reads Terraform configurations as JSON (@cdktf/hcl2json, HashiCorp's HCL parser compiled to WebAssembly). */
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { parse } from "@cdktf/hcl2json";

export type HclBlock = Record<string, unknown>;
/** A directory's configuration: every .tf file parsed, blocks of the same kind concatenated. */
export type HclConfig = Record<string, unknown>;

export const TERRAFORM_ROOT = join(import.meta.dirname, "../../../terraform");

/** Every directory under `root` holding .tf files, sorted; `common/` (symlink targets only) included. */
export async function terraformDirectories(root: string = TERRAFORM_ROOT): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string) => {
    const entries = await readdir(dir, { withFileTypes: true });
    if (entries.some((e) => e.name.endsWith(".tf"))) out.push(dir);
    for (const e of entries) if (e.isDirectory() && !e.name.startsWith(".")) await walk(join(dir, e.name));
  };
  await walk(root);
  return out.sort();
}

function merge(target: HclConfig, source: HclConfig): void {
  for (const [key, value] of Object.entries(source)) {
    const existing = target[key];
    if (Array.isArray(existing) && Array.isArray(value)) existing.push(...value);
    else if (existing && typeof existing === "object" && value && typeof value === "object") {
      merge(existing as HclConfig, value as HclConfig);
    } else target[key] = value;
  }
}

/** Parses one file; a syntax error names the file and line. */
export async function parseFile(file: string): Promise<HclConfig> {
  return (await parse(relative(process.cwd(), file), await readFile(file, "utf8"))) as HclConfig;
}

export async function parseDirectory(dir: string): Promise<HclConfig> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".tf")).sort();
  const config: HclConfig = {};
  for (const file of files) merge(config, await parseFile(join(dir, file)));
  return config;
}

/** `${...}` around an expression, as hcl2json writes it, removed. */
export function expression(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.startsWith("${") && text.endsWith("}") ? text.slice(2, -1) : text;
}

/** The first (only) body of a named block: `config.variable.name[0]`. */
export function body(config: HclConfig, kind: string, name: string): HclBlock | undefined {
  return ((config[kind] as Record<string, HclBlock[]> | undefined)?.[name] ?? [])[0];
}

export function names(config: HclConfig, kind: string): string[] {
  return Object.keys((config[kind] as Record<string, unknown> | undefined) ?? {});
}
