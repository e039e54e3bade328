/**
 * The deployment rules of docs/deploy.md and docs/security.md, read off the workflow files (what zizmor
 * and actionlint do not know about this repository): only main deploys, prod is planned before it is
 * approved and exactly that plan is applied, pull requests plan only what their plan role may read,
 * every init honours the lock files, no checkout leaves its credentials behind.
 * scripts/test/unit/workflow-rules.test.ts runs them on .github/workflows and on main's workflows from before
 * issue 25 (scripts/ci/fixtures/workflows-5096171), which break each rule.
 */
import { parse } from "yaml";

export interface Step {
  readonly uses?: string;
  readonly run?: string;
  readonly with?: Readonly<Record<string, unknown>>;
  readonly env?: Readonly<Record<string, unknown>>;
}

export interface Job {
  readonly if?: string;
  readonly needs?: string | readonly string[];
  readonly environment?: string | { readonly name: string };
  readonly uses?: string;
  readonly permissions?: Readonly<Record<string, string>>;
  readonly strategy?: { readonly matrix?: Readonly<Record<string, unknown>> };
  readonly steps?: readonly Step[];
}

export interface Workflow {
  readonly on?: unknown;
  readonly jobs: Readonly<Record<string, Job>>;
}

export type Workflows = Readonly<Record<string, Workflow>>;

export interface Violation {
  readonly rule: string;
  readonly where: string;
  readonly message: string;
}

export const parseWorkflow = (text: string): Workflow => parse(text) as Workflow;

const MAIN_GUARD = "github.ref == 'refs/heads/main'";
const runs = (job: Job) => (job.steps ?? []).map((s) => s.run ?? "").join("\n");
const needsOf = (job: Job) => [job.needs ?? []].flat();

/** deploy.yml and apply.yml: every job that can get AWS credentials or feeds one is guarded by the ref. */
function onlyMainDeploys(w: Workflows, out: Violation[]): void {
  for (const file of ["deploy.yml", "apply.yml"]) {
    const workflow = w[file];
    if (workflow === undefined) {
      out.push({ rule: "only-main-deploys", where: file, message: "missing" });
      continue;
    }
    for (const [name, job] of Object.entries(workflow.jobs)) {
      if (job.uses !== undefined) continue; // a call of apply.yml, whose jobs carry the guard
      if (!(job.if ?? "").includes(MAIN_GUARD))
        out.push({
          rule: "only-main-deploys",
          where: `${file} ${name}`,
          message: `no \`if: ${MAIN_GUARD}\``,
        });
    }
  }
}

/** apply.yml: the plan job (no environment) plans and shows; the environment job applies that plan only. */
function planShownThenApplied(w: Workflows, out: Violation[]): void {
  const rule = "plan-before-approval";
  const jobs = w["apply.yml"]?.jobs ?? {};
  const gated = Object.entries(jobs).filter(([, j]) => j.environment !== undefined);
  if (gated.length === 0) out.push({ rule, where: "apply.yml", message: "no job in a GitHub environment" });
  for (const [name, job] of gated) {
    const script = runs(job);
    if (/terraform plan/.test(script))
      out.push({
        rule,
        where: `apply.yml ${name}`,
        message: "plans inside the environment: the reviewer approves before the plan exists",
      });
    if (!/terraform apply -input=false tfplan\b/.test(script))
      out.push({ rule, where: `apply.yml ${name}`, message: "does not apply the saved plan tfplan" });
    const planJob = needsOf(job)
      .map((n) => [n, jobs[n]] as const)
      .find(
        ([, j]) =>
          j !== undefined && j.environment === undefined && /terraform plan[^\n]*-out=tfplan/.test(runs(j)),
      );
    if (planJob === undefined) {
      out.push({
        rule,
        where: `apply.yml ${name}`,
        message: "needs no job without environment that saves the plan",
      });
      continue;
    }
    const [planName, plan] = planJob;
    if (plan === undefined || !runs(plan).includes("GITHUB_STEP_SUMMARY"))
      out.push({
        rule,
        where: `apply.yml ${planName}`,
        message: "does not show the plan in the job summary",
      });
    // A summary holds at most 1 MiB and the job cuts the plan to fit: the reviewer must be able to read
    // all of it, and be told when the summary shows only part.
    const uploadsText = (plan?.steps ?? []).some(
      (st) =>
        st.uses?.startsWith("actions/upload-artifact@") && /plan\.txt/.test(String(st.with?.path ?? "")),
    );
    if (plan !== undefined && /\b(tail|head) -c\b/.test(runs(plan)) && !uploadsText)
      out.push({
        rule,
        where: `apply.yml ${planName}`,
        message:
          "cuts the plan shown in the summary and keeps no whole copy (upload plan.txt) for the reviewer",
      });
    if (plan !== undefined && /\b(tail|head) -c\b/.test(runs(plan)) && !/truncated/i.test(runs(plan)))
      out.push({
        rule,
        where: `apply.yml ${planName}`,
        message: "cuts the plan shown in the summary without saying so",
      });
    if (!/sha256sum tfplan/.test(script))
      out.push({
        rule,
        where: `apply.yml ${name}`,
        message: "does not check the plan file is the one the plan job saved",
      });
  }
}

/** The names of the Terraform variables a step sets (TF_VAR_<name> in its env, -var <name>= on its lines). */
function variablesOf(step: Step): string[] {
  const fromEnv = Object.keys(step.env ?? {})
    .filter((k) => k.startsWith("TF_VAR_"))
    .map((k) => k.slice("TF_VAR_".length));
  const fromFlags = [...(step.run ?? "").matchAll(/-var(?:-file)?[= ]["']?([\w.-]+)/g)].map(
    (m) => m[1] as string,
  );
  return [...fromEnv, ...fromFlags];
}

/**
 * A saved plan is applied with the values it was planned with: Terraform 1.11 ignores TF_VAR_ beside
 * `terraform apply <plan file>` without a word (and refuses -var), so a variable meant for the deploy must
 * be set where the plan is made. And the plan that is applied must set what a pull request's plan sets,
 * or the pull request shows a different change than the one the reviewer of the deploy approves.
 */
function variablesSetWhereThePlanIsMade(w: Workflows, out: Violation[]): void {
  const rule = "saved-plan-variables";
  const jobs = w["apply.yml"]?.jobs ?? {};
  for (const [name, job] of Object.entries(jobs))
    for (const step of job.steps ?? [])
      if (/terraform apply[^\n]*\btfplan\b/.test(step.run ?? ""))
        for (const variable of variablesOf(step))
          out.push({
            rule,
            where: `apply.yml ${name}`,
            message: `sets ${variable} beside the apply of the saved plan, where Terraform ignores it: set it on the plan`,
          });
  const planned = new Set(
    Object.values(jobs)
      .flatMap((j) => j.steps ?? [])
      .filter((s) => /terraform plan[^\n]*-out=tfplan/.test(s.run ?? ""))
      .flatMap(variablesOf),
  );
  for (const [name, job] of Object.entries(w["ci.yml"]?.jobs ?? {}))
    for (const step of (job.steps ?? []).filter((s) => /terraform plan/.test(s.run ?? "")))
      for (const variable of variablesOf(step).filter((v) => !planned.has(v)))
        out.push({
          rule,
          where: `ci.yml ${name}`,
          message: `sets ${variable} on the pull request's plan, which apply.yml's plan does not: the deploy plans another change`,
        });
}

/** ci.yml: pull requests plan only the environments whose plan role trusts them (bootstrap: dev). */
function pullRequestsPlanDevOnly(w: Workflows, out: Violation[], planOnPullRequest: readonly string[]): void {
  for (const [name, job] of Object.entries(w["ci.yml"]?.jobs ?? {})) {
    if (job.permissions?.["id-token"] !== "write") continue;
    const envs = [job.strategy?.matrix?.environment ?? []].flat().map(String);
    for (const env of envs.filter((e) => !planOnPullRequest.includes(e)))
      out.push({
        rule: "pull-request-plans",
        where: `ci.yml ${name}`,
        message: `plans ${env} on pull requests`,
      });
  }
}

/** Every terraform init honours the committed lock file. */
function initsReadOnly(w: Workflows, out: Violation[]): void {
  for (const [file, workflow] of Object.entries(w))
    for (const [name, job] of Object.entries(workflow.jobs))
      for (const line of runs(job).split("\n"))
        if (/\bterraform\b.*\binit\b/.test(line) && !line.includes("-lockfile=readonly"))
          out.push({ rule: "lockfile-readonly", where: `${file} ${name}`, message: line.trim() });
}

/**
 * Every terraform init names the state bucket, and its region, of the environment it plans or applies.
 * With one account per environment (docs/deploy.md's recommended layout) each environment has its own
 * bucket, perhaps in its own region, and the plan job, in no GitHub environment, sees only repository
 * variables: one TF_STATE_BUCKET for all would send prod's plan to dev's account.
 * `vars[format('TF_STATE_BUCKET_{0}', <environment>)]` (with `|| vars.TF_STATE_BUCKET` for one account)
 * names it per environment, and AWS_REGION_<environment> its region.
 */
function backendPerEnvironment(w: Workflows, out: Violation[]): void {
  const perEnvironment = (variable: string) =>
    new RegExp(`vars\\[format\\('${variable}_\\{0\\}', (inputs|matrix)\\.environment\\)\\]`);
  for (const [file, workflow] of Object.entries(w))
    for (const [name, job] of Object.entries(workflow.jobs))
      for (const step of job.steps ?? [])
        if (/\bterraform\b.*\binit\b.*bucket=\$STATE_BUCKET/.test(step.run ?? ""))
          for (const [env, variable] of [
            ["STATE_BUCKET", "TF_STATE_BUCKET"],
            ["AWS_REGION", "AWS_REGION"],
          ] as const)
            if (!perEnvironment(variable).test(String(step.env?.[env] ?? "")))
              out.push({
                rule: "backend-per-environment",
                where: `${file} ${name}`,
                message: `${env} is ${String(step.env?.[env] ?? "unset")}, the same for every environment: with one account per environment each has its own (vars[format('${variable}_{0}', <environment>)])`,
              });
}

/** No checkout leaves the job's token in .git/config (zizmor's artipacked). */
function checkoutsForgetCredentials(w: Workflows, out: Violation[]): void {
  for (const [file, workflow] of Object.entries(w))
    for (const [name, job] of Object.entries(workflow.jobs))
      for (const step of job.steps ?? [])
        if (step.uses?.startsWith("actions/checkout@") && step.with?.["persist-credentials"] !== false)
          out.push({
            rule: "checkout-credentials",
            where: `${file} ${name}`,
            message: "persist-credentials is not false",
          });
}

export function workflowViolations(
  w: Workflows,
  options: { readonly planOnPullRequest: readonly string[] },
): Violation[] {
  const out: Violation[] = [];
  onlyMainDeploys(w, out);
  planShownThenApplied(w, out);
  variablesSetWhereThePlanIsMade(w, out);
  pullRequestsPlanDevOnly(w, out, options.planOnPullRequest);
  initsReadOnly(w, out);
  checkoutsForgetCredentials(w, out);
  backendPerEnvironment(w, out);
  return out;
}
