/**
 * Terraform as the check runs it: on a copy of terraform/ in a temporary directory (the repository's tree
 * never gets .terraform, state or override files), with the provider from a filesystem mirror through a
 * generated CLI configuration file, and with override files that point the AWS provider at the emulator.
 */
import { spawn } from "node:child_process";
import { cp, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** Every service the roots and modules call (the endpoints the override file redirects). */
export const SERVICES = [
  "cloudwatch",
  "dynamodb",
  "iam",
  "kinesis",
  "kms",
  "lambda",
  "logs",
  "s3",
  "sns",
  "sqs",
  "sts",
] as const;

export interface Workspace {
  /** The copy of terraform/. */
  readonly terraformDir: string;
  readonly env: NodeJS.ProcessEnv;
  /** Stream Terraform's output as it runs (--verbose), besides keeping it for the error. */
  readonly verbose?: boolean;
  /** The lane's name, before each streamed line: the lanes run side by side. */
  readonly label?: string;
}

/** A line of Terraform's output and when it arrived, in seconds from the command's start. */
export interface TimedLine {
  readonly seconds: number;
  readonly text: string;
}

export interface TerraformResult {
  readonly code: number;
  readonly output: string;
  /** Every whole line of the output as it arrived (where an apply's or a destroy's time goes: waits.ts). */
  readonly lines: readonly TimedLine[];
}

export class TerraformError extends Error {
  override readonly name = "TerraformError";
  constructor(
    readonly args: readonly string[],
    readonly dir: string,
    readonly result: TerraformResult,
  ) {
    super(`terraform ${args.join(" ")} (in ${dir}) exited ${result.code}:\n${result.output.trimEnd()}`);
  }
}

/** A provider_installation block: hashicorp/aws from the mirror only, nothing from the network. */
export function cliConfig(mirrorDir: string | null): string {
  if (mirrorDir === null) return "";
  return [
    "provider_installation {",
    "  filesystem_mirror {",
    `    path    = ${JSON.stringify(mirrorDir)}`,
    '    include = ["registry.terraform.io/hashicorp/aws"]',
    "  }",
    "  direct {",
    '    exclude = ["registry.terraform.io/hashicorp/aws"]',
    "  }",
    "}",
    "",
  ].join("\n");
}

/**
 * The override file of a root under check: local state instead of the S3 backend (when the root has one),
 * test credentials, no calls to STS/EC2 metadata before the first real request, path-style S3, and every
 * service's endpoint at the emulator.
 */
export function emulatorOverride(endpoint: string, options: { localBackend: boolean }): string {
  const backend = options.localBackend
    ? ["terraform {", '  backend "local" {', '    path = "terraform.tfstate"', "  }", "}", ""]
    : [];
  return [
    "# Written by tools/terraform/src/tf-check: points the AWS provider at the emulator. Never committed.",
    ...backend,
    'provider "aws" {',
    '  access_key                  = "test"',
    '  secret_key                  = "test"',
    "  skip_credentials_validation = true",
    "  skip_requesting_account_id  = true",
    "  skip_metadata_api_check     = true",
    "  s3_use_path_style           = true",
    "  endpoints {",
    ...SERVICES.map((s) => `    ${s.padEnd(14)} = ${JSON.stringify(endpoint)}`),
    "  }",
    "}",
    "",
  ].join("\n");
}

export async function createWorkspace(
  repositoryRoot: string,
  tmp: string,
  mirrorDir: string | null,
  standInProviderVersion?: string,
): Promise<Workspace> {
  const terraformDir = join(tmp, "terraform");
  await cp(join(repositoryRoot, "terraform"), terraformDir, {
    recursive: true,
    verbatimSymlinks: true,
    // The roots' committed lock files come along (lock-files.ts points them at the mirror's build).
    filter: (src) => !/[/\\](\.terraform|terraform\.tfstate[^/]*)$/.test(src),
  });
  // The build's artifacts beside the copy, where the environments' default repository_root ("../../..")
  // finds dist/manifest.json and the zips: the path deploy.yml relies on is the one applied here.
  await cp(join(repositoryRoot, "dist"), join(tmp, "dist"), { recursive: true }).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  });
  // --stand-in-provider VERSION: every module and root of the copy pins hashicorp/aws to VERSION, for
  // trying the check's own tooling with another build in a mirror while 6.x is being built. Never used by
  // .ci/run or CI: it overrides the product's ">= 6.0, < 7.0".
  if (standInProviderVersion !== undefined) {
    for (const f of await readdir(terraformDir, { recursive: true })) {
      if (!f.endsWith("versions.tf")) continue;
      await writeFile(
        join(terraformDir, f.replace(/versions\.tf$/, "stand_in_provider_override.tf")),
        `terraform {\n  required_providers {\n    aws = {\n      source  = "hashicorp/aws"\n      version = "${standInProviderVersion}"\n    }\n  }\n}\n`,
      );
    }
  }
  const configFile = join(tmp, "terraform.rc");
  await writeFile(configFile, cliConfig(mirrorDir));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TF_IN_AUTOMATION: "1",
    TF_INPUT: "0",
    CHECKPOINT_DISABLE: "1",
    TF_CLI_CONFIG_FILE: configFile,
    // Never pick up a developer's real account.
    AWS_PROFILE: undefined,
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    AWS_SESSION_TOKEN: undefined,
    AWS_EC2_METADATA_DISABLED: "true",
    // Terraform and the provider (which inherits the environment) spend much of each command building and
    // decoding hashicorp/aws's schema of every resource type; with the garbage collector running a quarter
    // as often they use about 30% less CPU for ~15% more memory (validate of dev: 3.6-4.6 s of user time
    // instead of 5.1-6.4 s, 0.92 GB at most instead of 0.80 GB).
    GOGC: "400",
  };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  return { terraformDir, env };
}

export function terraform(
  workspace: Workspace,
  dir: string,
  args: readonly string[],
): Promise<TerraformResult> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn("terraform", [`-chdir=${dir}`, ...args], {
      env: workspace.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const lines: TimedLine[] = [];
    let taken = 0; // how much of output has been split into lines (whole lines only, until the end)
    const prefix = workspace.label === undefined ? "" : `[${workspace.label}] `;
    const take = (all: boolean) => {
      const end = all ? output.length : output.lastIndexOf("\n") + 1;
      if (end <= taken) return;
      const seconds = (performance.now() - started) / 1000;
      const texts = output.slice(taken, end).replace(/\n$/, "").split("\n");
      taken = end;
      for (const text of texts) lines.push({ seconds, text });
      if (workspace.verbose) process.stdout.write(`${texts.map((l) => prefix + l).join("\n")}\n`);
    };
    const collect = (c: Buffer) => {
      output += c.toString("utf8");
      take(false);
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.once("error", reject);
    child.once("close", (code) => {
      take(true);
      resolve({ code: code ?? 1, output, lines });
    });
  });
}

/** Runs terraform and throws TerraformError unless it exits with one of `ok` (0 by default). */
export async function terraformOk(
  workspace: Workspace,
  dir: string,
  args: readonly string[],
  ok: readonly number[] = [0],
): Promise<TerraformResult> {
  const result = await terraform(workspace, dir, args);
  if (!ok.includes(result.code)) throw new TerraformError(args, dir, result);
  return result;
}
