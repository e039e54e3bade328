/**
 * The checks tf:check runs after an environment's apply, on a saved state: each function's permissions
 * against its bundle (permissions/check.ts), and the quarantine's protection (quarantine-protection.ts).
 *
 *   terraform show -json > state.json    # in an applied root (tf:check --keep leaves its workspace)
 *   npx tsx tools/terraform/src/tf-check/check-deployed.ts --state state.json --env dev [--dist dist]
 *
 * Exit status: 0 no findings, 1 findings, 2 a bad command line or an unreadable file.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ExitCode, parseCommandLine, refuseCommandLine, runIfMain, UsageError } from "@mcp-pipeline/cli";
import { loadSettings } from "@mcp-pipeline/settings";
import { deployedPermissionFindings, describeFindings } from "./permissions/check.ts";
import { quarantineProtectionFindings } from "./permissions/quarantine-protection.ts";
import type { TerraformShow } from "./permissions/terraform-state.ts";

const USAGE = `Usage: npx tsx tools/terraform/src/tf-check/check-deployed.ts --state <terraform show -json output> --env <dev|prod> [--dist <dir>] [--root <dir>]

  --state  the JSON of \`terraform show -json\` in an applied environment root
  --env    the environment whose settings it was applied with (<root>/terraform/environments/<env>)
  --dist   where \`npm run build\` left the bundles (default: <root>/dist)
  --root   the checkout whose sources and settings were built and applied (default: this repository)`;

export async function main(argv: readonly string[]): Promise<number> {
  let values: { state?: string; env?: string; dist?: string; root?: string };
  try {
    values = parseCommandLine(argv, {
      options: {
        state: { type: "string" },
        env: { type: "string" },
        dist: { type: "string" },
        root: { type: "string" },
      },
    }).values;
    if (values.state === undefined) throw new UsageError("--state is required");
    if (values.env === undefined) throw new UsageError("--env is required");
  } catch (error) {
    return refuseCommandLine(error, USAGE);
  }
  let show: TerraformShow;
  try {
    show = JSON.parse(await readFile(values.state, "utf8")) as TerraformShow;
  } catch (error) {
    process.stderr.write(`${values.state}: ${error instanceof Error ? error.message : String(error)}\n`);
    return ExitCode.Usage;
  }
  const root = values.root ?? join(import.meta.dirname, "../../../..");
  const settings = await loadSettings(root, values.env);
  const findings = [
    ...describeFindings(
      await deployedPermissionFindings(show, {
        root,
        distDir: values.dist ?? join(root, "dist"),
        namePrefix: settings.name_prefix,
      }),
    ),
    ...quarantineProtectionFindings(show, settings),
  ];
  for (const line of findings) process.stdout.write(`${line}\n`);
  process.stdout.write(`${findings.length} finding(s)\n`);
  return findings.length === 0 ? ExitCode.Ok : ExitCode.Failed;
}

runIfMain(import.meta.url, main, ExitCode.Usage);
