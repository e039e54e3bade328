// The deployment rules of the workflows (scripts/ci/workflow-rules.ts): the committed workflows keep
// them, and main's workflows from before issue 25 break each of them.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  parseWorkflow,
  type Step,
  type Workflow,
  type Workflows,
  workflowViolations,
} from "../../ci/workflow-rules.ts";

const root = join(import.meta.dirname, "../../..");

async function load(dir: string): Promise<Workflows> {
  const out: Record<string, ReturnType<typeof parseWorkflow>> = {};
  for (const f of (await readdir(dir)).filter((f) => f.endsWith(".yml")))
    out[f] = parseWorkflow(await readFile(join(dir, f), "utf8"));
  return out;
}

// terraform/bootstrap's plan_on_pull_request default.
const options = { planOnPullRequest: ["dev"] };

describe("workflow rules", () => {
  it(".github/workflows keeps every rule", async () => {
    expect(workflowViolations(await load(join(root, ".github", "workflows")), options)).toEqual([]);
  });

  // Terraform 1.11.4 applies a saved plan with the values it was planned with and ignores TF_VAR_ beside
  // it: TF_VAR_runbook_url on apply.yml's apply step left every alarm's runbook link at its default.
  it("a variable set beside the apply of the saved plan is refused (saved-plan-variables)", async () => {
    const workflows = await load(join(root, ".github", "workflows"));
    const apply = structuredClone(workflows["apply.yml"]) as Workflow;
    const step = apply.jobs.apply?.steps?.find((s) => /terraform apply/.test(s.run ?? ""));
    expect(step).toBeDefined();
    (step as { env: Record<string, string> }).env = { ...step?.env, TF_VAR_runbook_url: "https://x" };
    expect(
      workflowViolations({ ...workflows, "apply.yml": apply }, options).map((v) => `${v.rule} ${v.where}`),
    ).toContain("saved-plan-variables apply.yml apply");
  });

  it("a variable the pull request's plan sets and the deploy's plan does not is refused", async () => {
    const workflows = await load(join(root, ".github", "workflows"));
    const apply = structuredClone(workflows["apply.yml"]) as Workflow;
    for (const s of apply.jobs.plan?.steps ?? [])
      if (s.env !== undefined)
        (s as { env: Record<string, unknown> }).env = Object.fromEntries(
          Object.entries(s.env).filter(([k]) => !k.startsWith("TF_VAR_")),
        );
    expect(workflowViolations({ ...workflows, "apply.yml": apply }, options)).toContainEqual(
      expect.objectContaining({ rule: "saved-plan-variables", where: "ci.yml plan" }),
    );
  });

  // The summary shows at most the plan's last 900,000 bytes: the reviewer must be told, and have it whole.
  it("a plan cut for the summary with no whole copy, or no word of the cut, is refused", async () => {
    const workflows = await load(join(root, ".github", "workflows"));
    const apply = structuredClone(workflows["apply.yml"]) as Workflow;
    const plan = apply.jobs.plan as { steps: Step[] };
    plan.steps = plan.steps
      .filter((s) => !/plan\.txt/.test(String(s.with?.path ?? "")))
      .map((s) => (s.run?.includes("tail -c") ? { ...s, run: s.run.replace(/truncated/g, "long") } : s));
    expect(workflowViolations({ ...workflows, "apply.yml": apply }, options).map((v) => v.message)).toEqual([
      "cuts the plan shown in the summary and keeps no whole copy (upload plan.txt) for the reviewer",
      "cuts the plan shown in the summary without saying so",
    ]);
  });

  // One account per environment (docs/deploy.md's recommended layout) means one state bucket per
  // environment; the plan job runs in no GitHub environment, so a repository variable is all it sees.
  it("a state bucket or region taken from one variable for every environment is refused (backend-per-environment)", async () => {
    const workflows = await load(join(root, ".github", "workflows"));
    const apply = structuredClone(workflows["apply.yml"]) as Workflow;
    for (const s of apply.jobs.plan?.steps ?? [])
      if (s.env?.STATE_BUCKET !== undefined)
        (s as { env: Record<string, unknown> }).env = {
          ...s.env,
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a template.
          STATE_BUCKET: "${{ vars.TF_STATE_BUCKET }}",
        };
    expect(
      workflowViolations({ ...workflows, "apply.yml": apply }, options).map((v) => `${v.rule} ${v.where}`),
    ).toEqual(["backend-per-environment apply.yml plan"]);
  });

  it("main's workflows at 5096171 break each rule", async () => {
    const violations = workflowViolations(
      await load(join(root, "scripts", "ci", "fixtures", "workflows-5096171")),
      options,
    );
    const byRule = (rule: string) =>
      violations.filter((v) => v.rule === rule).map((v) => `${v.where}: ${v.message}`);
    expect(byRule("only-main-deploys")).toEqual(
      expect.arrayContaining([
        "deploy.yml build: no `if: github.ref == 'refs/heads/main'`",
        "apply.yml apply: no `if: github.ref == 'refs/heads/main'`",
      ]),
    );
    expect(byRule("plan-before-approval")).toEqual(
      expect.arrayContaining([
        "apply.yml apply: plans inside the environment: the reviewer approves before the plan exists",
        "apply.yml apply: does not apply the saved plan tfplan",
      ]),
    );
    expect(byRule("pull-request-plans")).toEqual(["ci.yml plan: plans prod on pull requests"]);
    expect(byRule("lockfile-readonly")).toHaveLength(3);
    expect(byRule("checkout-credentials")).toHaveLength(6);
    expect(byRule("backend-per-environment")).toHaveLength(4);
  });
});
