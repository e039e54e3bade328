/**
 * npm run iam:check: every policy the Terraform roots create, as their plans render it (tf:check saves
 * `terraform show -json` of each root's plan after its apply on moto with --plans-out), judged twice:
 * by this repository's own assertions (assertions.ts: who can assume which role, what each role can
 * touch, in one account) and by cloudsplaining (cloudsplaining.ts), whose findings need a written reason
 * in accepted-findings.json. docs/security.md says what each check guards and how to run it.
 *
 * Usage: npm run iam:check -- --plans DIR [--cloudsplaining PATH] [--work DIR]
 *        npm run iam:check -- --plans DIR --write-fixture DIR   (the plans, trimmed to what is read)
 * DIR holds bootstrap.json, dev.json and prod.json. Exit 0: no finding; 1: findings; 2: bad command line.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ExitCode, parseCommandLine, refuseCommandLine, runIfMain, UsageError } from "@mcp-pipeline/cli";
import { runChecks } from "./assertions.ts";
import { type CloudsplainingFinding, parseAcceptances, scan, unexplained } from "./cloudsplaining.ts";
import { type Inventory, inventory, type PlanJson, trimPlan } from "./inventory.ts";

export const ROOTS = ["bootstrap", "dev", "prod"] as const;
export const ACCEPTED = join(import.meta.dirname, "accepted-findings.json");

const USAGE = `usage: npm run iam:check -- --plans DIR [--cloudsplaining PATH] [--work DIR]
       npm run iam:check -- --plans DIR --write-fixture DIR
DIR holds bootstrap.json, dev.json and prod.json: \`terraform show -json\` of each root's plan after its
apply (npm run tf:check -- --plans-out DIR writes them).`;

export interface Variables {
  readonly variables?: Readonly<Record<string, { readonly value?: unknown }>>;
  readonly planned_values?: { readonly outputs?: Readonly<Record<string, { readonly value?: unknown }>> };
}

export interface Loaded {
  readonly plans: Readonly<Record<(typeof ROOTS)[number], PlanJson & Variables>>;
  readonly inventories: Readonly<Record<(typeof ROOTS)[number], Inventory>>;
}

export async function loadPlans(dir: string): Promise<Loaded> {
  const plans = {} as Record<(typeof ROOTS)[number], PlanJson & Variables>;
  const inventories = {} as Record<(typeof ROOTS)[number], Inventory>;
  for (const root of ROOTS) {
    const file = join(dir, `${root}.json`);
    const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT")
        throw new UsageError(`--plans ${dir}: no ${root}.json (npm run tf:check -- --plans-out ${dir})`);
      throw error;
    });
    plans[root] = JSON.parse(text) as PlanJson & Variables;
    inventories[root] = inventory(root, plans[root]);
  }
  return { plans, inventories };
}

/** Bootstrap's inputs as the plan records them (absent in roots older than the variable: its default then). */
export function bootstrapInputs(plan: Variables) {
  const value = (name: string) => plan.variables?.[name]?.value;
  const repository = value("github_repository");
  if (typeof repository !== "string") throw new UsageError("bootstrap.json: no github_repository variable");
  const branch = value("deploy_branch");
  const outputs = plan.planned_values?.outputs;
  // What the roles' trust was written with: the output (the variable's default resolved, null meaning dev
  // where the account has it), or the variable in a root that predates the output.
  const onPullRequest = outputs?.plan_on_pull_request?.value ?? value("plan_on_pull_request");
  // The subject template the roles' trust is written for; a root without the output predates it.
  const keys = outputs?.github_oidc_subject_claim_keys?.value;
  return {
    repository,
    deployBranch: typeof branch === "string" ? branch : "main",
    planOnPullRequest: Array.isArray(onPullRequest) ? onPullRequest.map(String) : [],
    ...(Array.isArray(keys) ? { subjectClaimKeys: keys.map(String) } : {}),
  };
}

export interface Report {
  readonly lines: string[];
  readonly failed: boolean;
}

export async function check(
  loaded: Loaded,
  options: { cloudsplaining?: string | undefined; workDir: string },
): Promise<Report> {
  const { bootstrap, dev, prod } = loaded.inventories;
  const inputs = bootstrapInputs(loaded.plans.bootstrap);
  const lines: string[] = [];
  const report = runChecks(
    {
      bootstrap,
      environments: { dev, prod },
      repository: inputs.repository,
      deployBranch: inputs.deployBranch,
      ...(inputs.subjectClaimKeys ? { subjectClaimKeys: inputs.subjectClaimKeys } : {}),
    },
    { planOnPullRequest: inputs.planOnPullRequest },
  );
  const roles = [bootstrap, dev, prod].flatMap((i) => i.roles);
  lines.push(
    `assertions: ${report.evaluated} requests evaluated over ${roles.length} roles, ${[bootstrap, dev, prod].reduce((n, i) => n + i.resourcePolicies.length, 0)} resource policies: ${report.findings.length} findings`,
  );
  for (const f of report.findings) lines.push(`  FAIL ${f.check}: ${f.message}`);

  let open: CloudsplainingFinding[] = [];
  if (options.cloudsplaining !== undefined) {
    const accepted = parseAcceptances(await readFile(ACCEPTED, "utf8"), ACCEPTED);
    const findings = await scan(options.cloudsplaining, [bootstrap, dev, prod], options.workDir);
    const result = unexplained(findings, accepted);
    open = result.open;
    const count = (mode: string) => findings.filter((f) => f.mode === mode).length;
    lines.push(
      `cloudsplaining: ${count("default")} findings (default run), ${count("all-risky-actions")} resource-exposure actions (--flag-all-risky-actions); ${findings.length - open.length} accepted with a reason, ${open.length} unexplained`,
    );
    for (const f of open)
      lines.push(
        `  FAIL cloudsplaining ${f.mode} ${f.category}: ${f.item} (${f.policy}, roles ${f.roles.join(", ") || "none"})`,
      );
    for (const a of result.unused)
      lines.push(
        `  note: accepted-findings.json entry for ${a.category} ${a.items.join(", ")} matched nothing (stale?)`,
      );
  } else lines.push("cloudsplaining: not run (no --cloudsplaining)");
  return { lines, failed: report.findings.length > 0 || open.length > 0 };
}

export async function main(argv: readonly string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseCommandLine(argv, {
      options: {
        plans: { type: "string" },
        cloudsplaining: { type: "string" },
        work: { type: "string" },
        "write-fixture": { type: "string" },
      },
    }).values;
    if (typeof values.plans !== "string") throw new UsageError("--plans DIR is required");
  } catch (error) {
    return refuseCommandLine(error, USAGE);
  }
  const plansDir = values.plans as string;
  let loaded: Loaded;
  try {
    loaded = await loadPlans(plansDir);
  } catch (error) {
    if (error instanceof UsageError) return refuseCommandLine(error, USAGE);
    throw error;
  }
  if (typeof values["write-fixture"] === "string") {
    const out = values["write-fixture"];
    await mkdir(out, { recursive: true });
    for (const root of ROOTS) {
      const { variables } = loaded.plans[root];
      const trimmed = { variables, ...trimPlan(loaded.plans[root]) };
      await writeFile(join(out, `${root}.json`), `${JSON.stringify(trimmed, null, 1)}\n`);
    }
    process.stdout.write(`wrote ${ROOTS.map((r) => `${r}.json`).join(", ")} to ${out}\n`);
    return ExitCode.Ok;
  }
  const workDir = typeof values.work === "string" ? values.work : await mkdtemp(join(tmpdir(), "iam-check-"));
  try {
    const cloudsplaining = typeof values.cloudsplaining === "string" ? values.cloudsplaining : undefined;
    const report = await check(loaded, { cloudsplaining, workDir });
    process.stdout.write(`${report.lines.join("\n")}\n`);
    process.stdout.write(report.failed ? "iam:check FAILED\n" : "iam:check passed\n");
    return report.failed ? ExitCode.Failed : ExitCode.Ok;
  } finally {
    if (typeof values.work !== "string") await rm(workDir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, main, ExitCode.Failed);
