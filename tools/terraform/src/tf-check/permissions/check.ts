/**
 * The permission check of an applied environment: every function of the pipeline against the bundle the
 * build made of it (dist/<function>/meta.json). Run by `npm run tf:check` after each environment's apply;
 * `npx tsx tools/terraform/src/tf-check/check-deployed.ts` runs it on a saved `terraform show -json`.
 */
import { FUNCTION_KEYS, resourceNames } from "@mcp-pipeline/settings";
import { FindingKind, functionPermissionFindings, type PermissionFinding } from "./function-permissions.ts";
import { functionCalls } from "./sdk-calls.ts";
import { type DeployedFunction, DeployedState, type TerraformShow } from "./terraform-state.ts";

export interface PermissionCheckOptions {
  /** The repository (the bundles' sources). */
  readonly root: string;
  /** Where `npm run build` left dist/<function>/meta.json. */
  readonly distDir: string;
  /** The environment's name_prefix. */
  readonly namePrefix: string;
}

export async function deployedPermissionFindings(
  show: TerraformShow,
  options: PermissionCheckOptions,
): Promise<PermissionFinding[]> {
  const state = new DeployedState(show);
  const deployed = new Map(state.functions().map((fn) => [fn.name, fn]));
  const names = resourceNames(options.namePrefix).functions;
  const byName = (name: string): DeployedFunction | undefined =>
    deployed.get(`${options.namePrefix}-${name}`);
  const findings: PermissionFinding[] = [];
  for (const key of FUNCTION_KEYS) {
    const fn = deployed.get(names[key]);
    const name = names[key].slice(options.namePrefix.length + 1);
    if (fn === undefined) {
      findings.push({ function: name, kind: FindingKind.Unchecked, message: "not in the state" });
      continue;
    }
    const calls = await functionCalls(options.root, options.distDir, name);
    findings.push(...functionPermissionFindings(name, fn, calls, state, byName));
  }
  for (const fn of deployed.values())
    if (!Object.values(names).includes(fn.name))
      findings.push({
        function: fn.name,
        kind: FindingKind.Unchecked,
        message: "a function the check does not know",
      });
  return findings;
}

/** One line per finding, for tf:check's failure and the CLI. */
export function describeFindings(findings: readonly PermissionFinding[]): string[] {
  return findings.map((f) => `${f.function}: ${f.kind}: ${f.message}`);
}
