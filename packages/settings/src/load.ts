import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describeIssue } from "@mcp-pipeline/contracts/schema-issues";
import { ENVIRONMENT_NAME, type EnvironmentSettings, environmentSettingsSchema } from "./schema.js";

/** The settings file of an environment could not be read or breaks the schema; `problems` lists each. */
export class SettingsError extends Error {
  readonly file: string;
  readonly problems: readonly string[];

  constructor(file: string, problems: readonly string[], options?: ErrorOptions) {
    super(`${file}:\n  ${problems.join("\n  ")}`, options);
    this.name = "SettingsError";
    this.file = file;
    this.problems = problems;
  }
}

export function settingsFile(repositoryRoot: string, environment: string): string {
  return join(repositoryRoot, "terraform", "environments", environment, "terraform.tfvars.json");
}

/** Whether the parsed JSON holds a value at `path` (a field the schema filled with its default does not). */
function holds(json: unknown, path: readonly PropertyKey[]): boolean {
  let node = json;
  for (const key of path) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) return false;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return true;
}

/**
 * Checks parsed JSON against the schema; every problem is reported with its path. A rule across fields
 * that fails on a field the file does not hold (a tuning default) says so: the person reading it looks
 * for that field in the file.
 */
export function parseSettings(file: string, json: unknown): EnvironmentSettings {
  const parsed = environmentSettingsSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  throw new SettingsError(
    file,
    parsed.error.issues.map((issue) =>
      issue.code === "custom" && !holds(json, issue.path)
        ? `${describeIssue(issue)} (the file does not set ${issue.path.map(String).join(".")}: that is its default)`
        : describeIssue(issue),
    ),
  );
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads a settings file (the terraform.tfvars.json shape) and checks it; every problem is a SettingsError
 * naming the file. JSON text is UTF-8 (RFC 8259, section 8.1): a file that is not is refused, not read with U+FFFD
 * in place of its bad bytes.
 */
export async function loadSettingsFile(file: string): Promise<EnvironmentSettings> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new SettingsError(file, [`cannot read: ${(error as Error).message}`], { cause: error });
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch (error) {
    throw new SettingsError(file, ["not UTF-8"], { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new SettingsError(file, [`not JSON: ${(error as Error).message}`], { cause: error });
  }
  return parseSettings(file, json);
}

/** Reads `terraform/environments/<environment>/terraform.tfvars.json` under `repositoryRoot`. */
export async function loadSettings(
  repositoryRoot: string,
  environment: string,
): Promise<EnvironmentSettings> {
  if (!ENVIRONMENT_NAME.test(environment)) {
    throw new SettingsError(environment, [
      `"${environment}" is not an environment name (lowercase, 2-16 chars)`,
    ]);
  }
  const file = settingsFile(repositoryRoot, environment);
  const settings = await loadSettingsFile(file);
  if (settings.environment !== environment) {
    throw new SettingsError(file, [
      `environment is "${settings.environment}" in the file of "${environment}"`,
    ]);
  }
  return settings;
}
