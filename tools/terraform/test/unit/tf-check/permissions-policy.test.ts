import { describe, expect, it } from "vitest";
import {
  decide,
  matchesPattern,
  type PolicyDocument,
  UnsupportedPolicyError,
} from "../../../src/tf-check/permissions/policy.ts";

const doc = (...Statement: PolicyDocument["Statement"][]): PolicyDocument => ({
  Version: "2012-10-17",
  Statement: Statement.flat() as PolicyDocument["Statement"],
});

describe("matchesPattern: IAM's * and ?", () => {
  it.each([
    ["arn:aws:s3:::b/kinesis/*", "arn:aws:s3:::b/kinesis/2026/x.json", true],
    ["arn:aws:s3:::b/kinesis/*", "arn:aws:s3:::b/results/x.json", false],
    ["arn:aws:s3:::b", "arn:aws:s3:::b/x", false],
    ["arn:aws:logs:r:1:log-group:/aws/lambda/f:*", "arn:aws:logs:r:1:log-group:/aws/lambda/f:*", true],
    ["arn:aws:sqs:r:1:q?", "arn:aws:sqs:r:1:q1", true],
    ["arn:aws:sqs:r:1:q.fifo", "arn:aws:sqs:r:1:qXfifo", false],
  ])("%s ~ %s: %s", (pattern, value, expected) => {
    expect(matchesPattern(pattern, value)).toBe(expected);
  });

  it("matches actions without regard to case", () => {
    expect(matchesPattern("sqs:changemessagevisibility", "sqs:ChangeMessageVisibility", true)).toBe(true);
    expect(matchesPattern("sqs:Change*", "sqs:ChangeMessageVisibility", true)).toBe(true);
  });
});

describe("decide: AWS's order (explicit deny, then allow, else implicit deny)", () => {
  const allow = {
    Sid: "A",
    Effect: "Allow" as const,
    Action: ["sqs:ReceiveMessage"],
    Resource: "arn:aws:sqs:r:1:q",
  };
  it("allows what a statement allows, on its resource only", () => {
    expect(decide([doc(allow)], { action: "sqs:ReceiveMessage", resource: "arn:aws:sqs:r:1:q" })).toBe(
      "allowed",
    );
    expect(decide([doc(allow)], { action: "sqs:ReceiveMessage", resource: "arn:aws:sqs:r:1:other" })).toBe(
      "implicitly-denied",
    );
    expect(
      decide([doc(allow)], { action: "sqs:ChangeMessageVisibility", resource: "arn:aws:sqs:r:1:q" }),
    ).toBe("implicitly-denied");
  });

  // The quarantine's statements, as terraform/modules/bucket renders them.
  const protect: PolicyDocument = doc(
    {
      Sid: "DenyDeletionAndUnprotecting",
      Effect: "Deny",
      Principal: "*",
      Action: ["s3:DeleteObject", "s3:PutBucketPolicy"],
      Resource: ["arn:aws:s3:::q", "arn:aws:s3:::q/*"],
      Condition: { ArnNotEquals: { "aws:PrincipalArn": ["arn:aws:iam::1:role/break-glass"] } },
    },
    {
      Sid: "DenyOverwrite",
      Effect: "Deny",
      Principal: { AWS: ["*"] },
      Action: "s3:PutObject",
      Resource: "arn:aws:s3:::q/*",
      Condition: {
        Null: { "s3:if-none-match": "true" },
        ArnNotEquals: { "aws:PrincipalArn": "arn:aws:iam::1:role/break-glass" },
      },
    },
  );

  it.each([
    ["s3:DeleteObject", "arn:aws:iam::1:role/deploy", {}, "explicitly-denied"],
    ["s3:DeleteObject", "arn:aws:iam::1:role/break-glass", {}, "implicitly-denied"],
    ["s3:PutObject", "arn:aws:iam::1:role/writer", {}, "explicitly-denied"],
    ["s3:PutObject", "arn:aws:iam::1:role/writer", { "s3:if-none-match": "*" }, "implicitly-denied"],
    ["s3:PutObject", "arn:aws:iam::1:role/break-glass", {}, "implicitly-denied"],
  ])("%s by %s with %j: %s", (action, principalArn, context, expected) => {
    expect(
      decide([protect], { action, resource: "arn:aws:s3:::q/kinesis/x.json", principalArn, context }),
    ).toBe(expected);
  });

  it("refuses what it does not understand instead of guessing", () => {
    const odd = doc({
      Sid: "Odd",
      Effect: "Deny",
      Action: "s3:*",
      Resource: "*",
      Condition: { DateGreaterThan: { "aws:CurrentTime": "2026-01-01T00:00:00Z" } },
    });
    expect(() => decide([odd], { action: "s3:GetObject", resource: "arn:aws:s3:::q/x" })).toThrow(
      UnsupportedPolicyError,
    );
    const not = doc({ Sid: "Not", Effect: "Allow", NotAction: "iam:*", Resource: "*" });
    expect(() => decide([not], { action: "s3:GetObject", resource: "arn:aws:s3:::q/x" })).toThrow(
      UnsupportedPolicyError,
    );
  });
});
