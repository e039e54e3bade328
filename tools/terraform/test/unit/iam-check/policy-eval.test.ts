// IAM's evaluation as npm run iam:check applies it: each rule against a policy small enough to read.
import { describe, expect, it } from "vitest";
import {
  decide,
  identityDecision,
  kmsDecision,
  type PolicyDocument,
  UnsupportedPolicyError,
  wildcardMatch,
} from "../../../src/iam-check/policy-eval.ts";

const doc = (...Statement: PolicyDocument["Statement"][]): PolicyDocument => ({
  Statement: Statement.flat() as PolicyDocument["Statement"],
});

describe("wildcardMatch", () => {
  it("* is any run (slashes too), ? one character, the rest literal", () => {
    expect(wildcardMatch("arn:aws:s3:::mcp-dev-*", "arn:aws:s3:::mcp-dev-q/kinesis/a.json")).toBe(true);
    expect(wildcardMatch("arn:aws:iam::1:role/mcp-dev/*", "arn:aws:iam::1:role/mcp-dev-deploy")).toBe(false);
    expect(wildcardMatch("a?c", "abc")).toBe(true);
    expect(wildcardMatch("a.c", "abc")).toBe(false);
    expect(wildcardMatch("s3:get*", "s3:GetObject", true)).toBe(true);
  });
});

describe("decide", () => {
  const allow = { Effect: "Allow" as const, Action: ["s3:GetObject"], Resource: "arn:aws:s3:::b/*" };

  it("allows what an Allow names, denies the rest implicitly, and an explicit Deny wins", () => {
    expect(decide([doc(allow)], { action: "s3:getobject", resource: "arn:aws:s3:::b/k" })).toBe("allowed");
    expect(decide([doc(allow)], { action: "s3:PutObject", resource: "arn:aws:s3:::b/k" })).toBe(
      "implicit-deny",
    );
    const deny = { Effect: "Deny" as const, Action: "s3:*", Resource: "*" };
    expect(decide([doc(allow), doc(deny)], { action: "s3:GetObject", resource: "arn:aws:s3:::b/k" })).toBe(
      "explicit-deny",
    );
  });

  it("NotAction and NotResource invert the match", () => {
    const s = { Effect: "Allow" as const, NotAction: "iam:*", NotResource: "arn:aws:s3:::secret/*" };
    expect(decide([doc(s)], { action: "s3:GetObject", resource: "arn:aws:s3:::b/k" })).toBe("allowed");
    expect(decide([doc(s)], { action: "iam:PassRole", resource: "*" })).toBe("implicit-deny");
    expect(decide([doc(s)], { action: "s3:GetObject", resource: "arn:aws:s3:::secret/k" })).toBe(
      "implicit-deny",
    );
  });

  it("a condition on an absent key is false, but true for a negated operator, IfExists and Null=true", () => {
    const cond = (Condition: Record<string, Record<string, string>>) =>
      doc({ Effect: "Allow", Action: "iam:CreateRole", Resource: "*", Condition });
    const req = { action: "iam:CreateRole", resource: "*" };
    expect(decide([cond({ StringEquals: { "iam:PermissionsBoundary": "b" } })], req)).toBe("implicit-deny");
    expect(decide([cond({ StringNotEquals: { "iam:PermissionsBoundary": "b" } })], req)).toBe("allowed");
    expect(decide([cond({ StringEqualsIfExists: { "iam:PermissionsBoundary": "b" } })], req)).toBe("allowed");
    expect(decide([cond({ Null: { "iam:PermissionsBoundary": "true" } })], req)).toBe("allowed");
    expect(decide([cond({ Null: { "iam:PermissionsBoundary": "false" } })], req)).toBe("implicit-deny");
    const withKey = { ...req, context: { "IAM:PermissionsBoundary": "b" } };
    expect(decide([cond({ StringEquals: { "iam:PermissionsBoundary": "b" } })], withKey)).toBe("allowed");
    expect(decide([cond({ StringNotEquals: { "iam:PermissionsBoundary": "b" } })], withKey)).toBe(
      "implicit-deny",
    );
  });

  it("several values of one key are alternatives; several keys and operators must all hold", () => {
    const s = doc({
      Effect: "Allow",
      Action: "sts:AssumeRoleWithWebIdentity",
      Principal: { Federated: "arn:aws:iam::1:oidc-provider/x" },
      Condition: {
        StringEquals: { "x:aud": "sts" },
        StringLike: { "x:sub": ["repo:a:ref:*", "repo:a:pull_request"] },
      },
    });
    const ask = (sub: string, aud = "sts") =>
      decide([s], {
        action: "sts:AssumeRoleWithWebIdentity",
        resource: "arn:aws:iam::1:role/r",
        principal: { kind: "Federated", arn: "arn:aws:iam::1:oidc-provider/x" },
        context: { "x:aud": aud, "x:sub": sub },
      });
    expect(ask("repo:a:ref:refs/heads/main")).toBe("allowed");
    expect(ask("repo:a:pull_request")).toBe("allowed");
    expect(ask("repo:a:environment:dev")).toBe("implicit-deny");
    expect(ask("repo:a:pull_request", "other")).toBe("implicit-deny");
  });

  it("ForAnyValue needs one value to match; ForAllValues holds over an empty set", () => {
    const s = (op: string) =>
      doc({
        Effect: "Allow",
        Action: "kms:TagResource",
        Resource: "*",
        Condition: { [op]: { "aws:TagKeys": ["owner"] } },
      });
    const req = (keys?: string[]) => ({
      action: "kms:TagResource",
      resource: "*",
      ...(keys === undefined ? {} : { context: { "aws:TagKeys": keys } }),
    });
    expect(decide([s("ForAnyValue:StringEquals")], req(["environment", "owner"]))).toBe("allowed");
    expect(decide([s("ForAnyValue:StringEquals")], req())).toBe("implicit-deny");
    expect(decide([s("ForAllValues:StringEquals")], req(["environment", "owner"]))).toBe("implicit-deny");
    expect(decide([s("ForAllValues:StringEquals")], req())).toBe("allowed");
  });

  it("refuses an operator it does not implement rather than skip the condition", () => {
    const s = doc({
      Effect: "Allow",
      Action: "*",
      Resource: "*",
      Condition: { DateLessThan: { "aws:CurrentTime": "2030" } },
    });
    expect(() => decide([s], { action: "s3:GetObject", resource: "*" })).toThrow(UnsupportedPolicyError);
  });
});

describe("identityDecision", () => {
  it("a permissions boundary limits what the role's policies allow", () => {
    const policy = doc({ Effect: "Allow", Action: ["s3:GetObject", "iam:PutRolePolicy"], Resource: "*" });
    const boundary = doc({ Effect: "Allow", Action: "s3:GetObject", Resource: "arn:aws:s3:::mcp-dev-*" });
    expect(
      identityDecision([policy], { action: "s3:GetObject", resource: "arn:aws:s3:::mcp-dev-q/k" }, [
        boundary,
      ]),
    ).toBe("allowed");
    expect(identityDecision([policy], { action: "iam:PutRolePolicy", resource: "*" }, [boundary])).toBe(
      "implicit-deny",
    );
    expect(
      identityDecision([policy], { action: "s3:GetObject", resource: "arn:aws:s3:::mcp-prod-q/k" }, [
        boundary,
      ]),
    ).toBe("implicit-deny");
  });
});

describe("kmsDecision", () => {
  const role = {
    kind: "AWS" as const,
    arn: "arn:aws:iam::111122223333:role/mcp-dev-deploy",
    account: "111122223333",
  };
  const iamAllowsTagging = doc({ Effect: "Allow", Action: "kms:PutKeyPolicy", Resource: "*" });

  it("a key that delegates to the account's IAM is open to what IAM allows", () => {
    const delegating = doc({
      Effect: "Allow",
      Principal: { AWS: "arn:aws:iam::111122223333:root" },
      Action: "kms:*",
      Resource: "*",
    });
    expect(
      kmsDecision(delegating, role, [iamAllowsTagging], { action: "kms:PutKeyPolicy", resource: "k" }),
    ).toBe("allowed");
    expect(kmsDecision(delegating, role, [], { action: "kms:PutKeyPolicy", resource: "k" })).toBe(
      "implicit-deny",
    );
  });

  it("a key policy naming the role is enough; one naming another role, with no delegation, is not", () => {
    const naming = (arn: string) =>
      doc({ Effect: "Allow", Principal: { AWS: [arn] }, Action: ["kms:PutKeyPolicy"], Resource: "*" });
    expect(kmsDecision(naming(role.arn), role, [], { action: "kms:PutKeyPolicy", resource: "k" })).toBe(
      "allowed",
    );
    expect(
      kmsDecision(naming("arn:aws:iam::111122223333:role/mcp-prod-deploy"), role, [iamAllowsTagging], {
        action: "kms:PutKeyPolicy",
        resource: "k",
      }),
    ).toBe("implicit-deny");
  });
});
