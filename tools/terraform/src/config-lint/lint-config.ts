/**
 * `npm run lint:config`: fails, naming the setting and the reason, on configuration that loses data or
 * stalls the pipeline. Reads every environment's terraform.tfvars.json through @mcp-pipeline/settings
 * and the pipeline module's wiring through the HCL parser.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { ExitCode, parseCommandLine, refuseCommandLine, shown, UsageError } from "@mcp-pipeline/cli";
import {
  ENVIRONMENT_NAME,
  type EnvironmentSettings,
  loadSettings,
  loadSettingsFile,
  SettingsError,
} from "@mcp-pipeline/settings";
import { body, expression, names, parseDirectory, TERRAFORM_ROOT } from "../hcl.js";
import { LiveReadError, liveSettings } from "./live.js";
import { type Finding, settingsFindings, type WiredModule, type Wiring, wiringFindings } from "./rules.js";

const USAGE = `npm run lint:config -- [options]

  (no options)          check every environment under terraform/environments and the pipeline's wiring
  --env NAME            check one environment
  --file PATH           check a settings file (terraform.tfvars.json shape) instead
  --terraform-dir DIR   the pipeline module whose alarm wiring is checked (default terraform/modules/pipeline)
  --live                read the deployed settings of --env through the AWS APIs (credentials needed)
  --region REGION       region for --live (default: the environment's region)

Exit status: 0 no findings, 1 findings, 2 bad options or an unreadable settings file.`;

export async function readWiring(dir: string): Promise<Wiring> {
  const config = await parseDirectory(dir);
  const modules = names(config, "module");
  const bySource = (source: string): WiredModule[] =>
    modules.flatMap((name) => {
      const block = body(config, "module", name);
      if (block?.source !== source) return [];
      return block.for_each === undefined ? [{ name }] : [{ name, forEach: expression(block.for_each) }];
    });
  const alarms = body(config, "module", "alarms") ?? {};
  return {
    queues: bySource("../queue"),
    functions: bySource("../function"),
    alarmInputs: {
      deadLetterQueues: expression(alarms.dead_letter_queues ?? ""),
      sourceQueues: expression(alarms.source_queues ?? ""),
      functions: expression(alarms.functions ?? ""),
    },
  };
}

function report(label: string, findings: readonly Finding[]): string {
  if (findings.length === 0) return `${label}: ok`;
  return [
    `${label}: ${findings.length} problem(s)`,
    ...findings.map((f) => `  ${f.rule}  ${f.setting}\n      ${f.message}`),
  ].join("\n");
}

/** The command line's run. */
export async function main(argv: readonly string[]): Promise<number> {
  let values: ReturnType<typeof parse>["values"];
  try {
    values = parse(argv).values;
  } catch (error) {
    return refuseCommandLine(error, USAGE);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return ExitCode.Ok;
  }
  const refused = refusedOptions(values);
  if (refused !== undefined) return refuseCommandLine(new UsageError(refused), USAGE);
  if (values.live && !values.env) return refuseCommandLine(new UsageError("--live needs --env"), USAGE);
  const root = join(TERRAFORM_ROOT, "..");
  const targets: { label: string; settings: () => Promise<EnvironmentSettings> }[] = [];
  if (values.file) {
    const file = values.file;
    targets.push({
      label: file,
      settings: () => loadSettingsFile(file),
    });
  } else {
    const environments = values.env
      ? [values.env]
      : (await readdir(join(TERRAFORM_ROOT, "environments"), { withFileTypes: true }))
          .filter((e) => e.isDirectory() && e.name !== "common")
          .map((e) => e.name);
    for (const env of environments) {
      targets.push({
        label: values.live ? `${env} (live)` : env,
        settings: async () => {
          const settings = await loadSettings(root, env);
          return values.live ? liveSettings(settings, values.region ?? settings.region) : settings;
        },
      });
    }
  }

  let problems = 0;
  const lines: string[] = [];
  for (const target of targets) {
    try {
      const findings = settingsFindings(await target.settings());
      problems += findings.length;
      lines.push(report(target.label, findings));
    } catch (error) {
      // loadSettings and loadSettingsFile report an unreadable, non-UTF-8 or non-JSON file as a SettingsError.
      if (error instanceof SettingsError) {
        process.stderr.write(`${target.label}: ${error.message}\n`);
        return ExitCode.Usage;
      }
      // --live without usable credentials or network: one line saying what to set, not the SDK's stack.
      if (error instanceof LiveReadError) {
        process.stderr.write(`${target.label}: ${error.message}\n`);
        return ExitCode.Usage;
      }
      throw error;
    }
  }
  const wiringDir = values["terraform-dir"] ?? join(TERRAFORM_ROOT, "modules", "pipeline");
  const wiring = wiringFindings(await readWiring(wiringDir));
  problems += wiring.length;
  lines.push(report(`alarms wiring (${wiringDir.replace(`${root}/`, "")})`, wiring));
  process.stdout.write(`${lines.join("\n")}\n`);
  return problems === 0 ? ExitCode.Ok : ExitCode.Failed;
}

/**
 * What is wrong with the options' values, if anything. An empty value would read as absent (`--env ""`
 * checked every environment), and an environment name is checked before it becomes a path.
 */
function refusedOptions(values: ReturnType<typeof parse>["values"]): string | undefined {
  for (const name of ["env", "file", "terraform-dir", "region"] as const) {
    if (values[name] === "") return `--${name} needs a value`;
  }
  if (values.env !== undefined && !ENVIRONMENT_NAME.test(values.env))
    return `--env must name an environment (e.g. dev), got "${shown(values.env)}"`;
  return undefined;
}

function parse(argv: readonly string[]) {
  return parseCommandLine(argv, {
    allowPositionals: false,
    options: {
      env: { type: "string" },
      file: { type: "string" },
      "terraform-dir": { type: "string" },
      live: { type: "boolean" },
      region: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}
