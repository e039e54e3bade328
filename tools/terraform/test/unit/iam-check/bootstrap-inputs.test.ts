// What iam:check takes bootstrap's trust to have been written with: github-trust judges each plan role's
// pull-request subject against it, so a default the check read wrongly would fail a correct trust, or
// pass a wrong one.
import { describe, expect, it } from "vitest";
import { bootstrapInputs } from "../../../src/iam-check/main.ts";

const repository = { github_repository: { value: "example-org/mcp-event-pipelines" } };

describe("bootstrap's inputs as iam:check reads them from the plan", () => {
  it("plan_on_pull_request is the output, the variable's null default resolved", () => {
    const plan = {
      variables: { ...repository, plan_on_pull_request: { value: null } },
      planned_values: { outputs: { plan_on_pull_request: { value: ["dev"] } } },
    };
    expect(bootstrapInputs(plan).planOnPullRequest).toEqual(["dev"]);
  });

  it("prod's own account: no environment planned on pull requests", () => {
    const plan = {
      variables: { ...repository, plan_on_pull_request: { value: null } },
      planned_values: { outputs: { plan_on_pull_request: { value: [] } } },
    };
    expect(bootstrapInputs(plan).planOnPullRequest).toEqual([]);
  });

  it("a root that predates the output: the variable", () => {
    const plan = { variables: { ...repository, plan_on_pull_request: { value: ["dev"] } } };
    expect(bootstrapInputs(plan).planOnPullRequest).toEqual(["dev"]);
  });
});
