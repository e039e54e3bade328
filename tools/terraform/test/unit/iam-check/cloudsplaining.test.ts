// cloudsplaining's results as npm run iam:check reads them, and the reasons it accepts findings for.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import {
  AcceptedFindingsError,
  authorizationDetails,
  type CloudsplainingFinding,
  parseAcceptances,
  parseResults,
  unexplained,
} from "../../../src/iam-check/cloudsplaining.ts";
import type { Inventory } from "../../../src/iam-check/inventory.ts";
import { ACCEPTED } from "../../../src/iam-check/main.ts";

const entry = {
  mode: "all-risky-actions",
  category: "ResourceExposure",
  roles: "^mcp-[a-z0-9]+-deploy$",
  items: ["s3:PutBucketPolicy"],
  reason: "The deploy role sets its own buckets' TLS-only policies, nothing else.",
};
const parse = (accepted: unknown[]) => parseAcceptances(JSON.stringify({ accepted }), "accepted.json");

describe("accepted-findings.json", () => {
  it("the committed file parses, every entry with a reason", async () => {
    const accepted = parseAcceptances(await readFile(ACCEPTED, "utf8"), ACCEPTED);
    expect(accepted.length).toBeGreaterThan(0);
  });

  it("refuses an entry for privilege escalation in the default run, and one without a reason", () => {
    expect(() => parse([{ ...entry, mode: "default", category: "PrivilegeEscalation" }])).toThrow(
      /PrivilegeEscalation in the default run is never accepted/,
    );
    expect(() => parse([{ ...entry, reason: "fine" }])).toThrow(AcceptedFindingsError);
    expect(() => parse([{ ...entry, category: "Whatever" }])).toThrow(/category/);
  });
});

describe("unexplained", () => {
  const finding = (over: Partial<CloudsplainingFinding>): CloudsplainingFinding => ({
    mode: "all-risky-actions",
    category: "ResourceExposure",
    roles: ["mcp-dev-deploy"],
    policy: "mcp-dev-deploy/deploy-dev",
    item: "s3:PutBucketPolicy",
    ...over,
  });

  it("a finding is explained only by an entry of its mode, category, roles and item", () => {
    const accepted = parse([entry]);
    expect(unexplained([finding({})], accepted).open).toEqual([]);
    expect(unexplained([finding({ roles: ["mcp-dev-plan"] })], accepted).open).toHaveLength(1);
    expect(unexplained([finding({ item: "sqs:SetQueueAttributes" })], accepted).open).toHaveLength(1);
    expect(unexplained([finding({ mode: "default" })], accepted).open).toHaveLength(1);
    expect(unexplained([finding({ roles: [] })], accepted).open).toHaveLength(1);
  });

  it("reports an entry that matched nothing", () => {
    expect(unexplained([], parse([entry])).unused).toHaveLength(1);
  });
});

describe("parseResults", () => {
  it("reads action findings and privilege-escalation methods, with the roles the policy is on", () => {
    const results = {
      inline_policies: {
        abc: {
          PolicyName: "mcp-dev-deploy/deploy-dev",
          AttachedTo: { roles: { AROA1: "mcp-dev-deploy" } },
          PrivilegeEscalation: { findings: [{ type: "PutRolePolicy", actions: ["iam:putrolepolicy"] }] },
          ResourceExposure: { findings: ["s3:PutBucketPolicy"] },
          DataExfiltration: { findings: [] },
        },
      },
    };
    const out = parseResults(JSON.stringify(results), "default");
    expect(out.map((f) => [f.category, f.item, f.roles.join()])).toEqual([
      ["PrivilegeEscalation", "PutRolePolicy", "mcp-dev-deploy"],
      ["ResourceExposure", "s3:PutBucketPolicy", "mcp-dev-deploy"],
    ]);
  });
});

describe("authorizationDetails", () => {
  it("lists each role with its inline policies, and leaves permissions boundaries out of the policies", () => {
    const boundary = "arn:aws:iam::1:policy/mcp-dev-function-boundary";
    const inv: Inventory = {
      root: "dev",
      roles: [
        {
          address: "r",
          name: "mcp-dev-processor",
          arn: "arn:aws:iam::1:role/mcp-dev/mcp-dev-processor",
          path: "/mcp-dev/",
          trust: { Statement: [] },
          inline: [{ name: "p", document: { Statement: [] } }],
          attached: [],
          boundary,
        },
      ],
      managedPolicies: new Map([[boundary, { Statement: [] }]]),
      resourcePolicies: [],
      arns: [],
    };
    const details = authorizationDetails([inv]) as {
      RoleDetailList: { RoleName: string; RolePolicyList: { PolicyName: string }[] }[];
      Policies: unknown[];
    };
    expect(details.RoleDetailList[0]?.RolePolicyList[0]?.PolicyName).toBe("mcp-dev-processor/p");
    expect(details.Policies).toEqual([]);
  });
});
