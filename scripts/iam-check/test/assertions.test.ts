// The threat model's assertions on main's roots before issue 25 (the committed fixture, rendered by
// tf:check on moto at 5096171), which must fail each check of the issue's items, and on hand-made cases.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runChecks } from "../assertions.ts";
import type { Inventory } from "../inventory.ts";
import { loadPlans } from "../main.ts";

const fixture = join(import.meta.dirname, "..", "fixtures", "main-5096171");

describe("main's roots at 5096171", () => {
  it("fail every check an item of issue 25 names, with the finding a reviewer would write", async () => {
    const { inventories } = await loadPlans(fixture);
    const { bootstrap, dev, prod } = inventories;
    const report = runChecks(
      {
        bootstrap,
        environments: { dev, prod },
        repository: "example-org/mcp-event-pipelines",
        deployBranch: "main",
      },
      { planOnPullRequest: [] },
    );
    const messages = (check: string) =>
      report.findings.filter((f) => f.check === check).map((f) => f.message);
    // Item 1: the deploy role can make itself administrator, and dev's role reaches prod's.
    expect(messages("deploy-role-iam")).toContain(
      "mcp-dev-deploy may iam:PutRolePolicy on arn:aws:iam::123456789012:role/mcp-dev-deploy",
    );
    expect(messages("deploy-role-iam")).toContain(
      "mcp-dev-deploy may iam:UpdateAssumeRolePolicy on arn:aws:iam::123456789012:role/mcp-dev-plan",
    );
    expect(messages("function-boundary")).toContain(
      "mcp-dev-processor: permissions boundary none, not arn:aws:iam::123456789012:policy/mcp-dev-function-boundary",
    );
    // Item 2: any workflow naming the environment gets the deploy role.
    expect(messages("github-trust")).toContain(
      "mcp-dev-deploy trusts GitHub's default subject (any workflow naming the environment) (repo:example-org/mcp-event-pipelines:environment:dev)",
    );
    // Item 3: plan roles with an AWS-managed policy nobody here reviews (ReadOnlyAccess, data reads included).
    expect(messages("plan-role-reads")).toContain(
      "mcp-prod-plan: attaches arn:aws:iam::aws:policy/ReadOnlyAccess, a policy no root here renders (AWS-managed): what it grants is not reviewed",
    );
    // Item 4: re-tag prod's alarm key, then rewrite its policy.
    expect(
      messages("cross-environment").some((m) =>
        /^mcp-dev-deploy may kms:PutKeyPolicy on prod's key .* \(re-tagged environment=dev\)$/.test(m),
      ),
    ).toBe(true);
    expect(messages("kms-by-tag")).toContain("mcp-dev-deploy may kms:TagResource on a key it did not create");
  });
});

describe("resource-exposure", () => {
  const inventory = (principal: string): Inventory => ({
    root: "dev",
    roles: [],
    managedPolicies: new Map(),
    arns: [
      "arn:aws:s3:::mcp-dev-quarantine-123456789012",
      "arn:aws:sqs:eu-west-1:123456789012:mcp-dev-tool-jobs",
    ],
    resourcePolicies: [
      {
        address: "module.pipeline.aws_s3_bucket_policy.this",
        kind: "bucket",
        resource: "arn:aws:s3:::mcp-dev-quarantine-123456789012",
        document: {
          Statement: [
            {
              Sid: "Read",
              Effect: "Allow",
              Principal: { AWS: principal },
              Action: "s3:GetObject",
              Resource: "*",
            },
          ],
        },
      },
    ],
  });
  const check = (principal: string) =>
    runChecks(
      { bootstrap: inventory(principal), environments: {}, repository: "o/r", deployBranch: "main" },
      { planOnPullRequest: [] },
    ).findings.map((f) => f.message);

  it("fails a resource policy that lets in another account or anyone", () => {
    expect(check("arn:aws:iam::999999999999:root")).toEqual([
      "dev: module.pipeline.aws_s3_bucket_policy.this allows arn:aws:iam::999999999999:root, outside account 123456789012",
    ]);
    expect(check("*")).toHaveLength(1);
    expect(check("arn:aws:iam::123456789012:role/mcp-dev/mcp-dev-processor")).toEqual([]);
  });
});
