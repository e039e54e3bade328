import { loadSettings } from "@mcp-pipeline/settings";
import { beforeAll, describe, expect, it } from "vitest";
import type { PolicyStatement } from "../../../src/tf-check/permissions/policy.ts";
import { quarantineProtectionFindings } from "../../../src/tf-check/permissions/quarantine-protection.ts";
import type { StateResource, TerraformShow } from "../../../src/tf-check/permissions/terraform-state.ts";

// The quarantine's protection judged on an applied state. The bucket policy, lifecycle and versioning below
// are those `npm run tf:check` applied for prod (terraform show -json, trimmed to the quarantine); each
// rule is shown passing on them and failing when they are broken on purpose.

const BUCKET = "mcp-prod-quarantine-123456789012";
const ARN = `arn:aws:s3:::${BUCKET}`;
const BREAK_GLASS = "arn:aws:iam::123456789012:role/mcp-prod-quarantine-break-glass";

const rendered: PolicyStatement[] = [
  {
    Sid: "DenyInsecureTransport",
    Effect: "Deny",
    Principal: "*",
    Action: "s3:*",
    Resource: [`${ARN}/*`, ARN],
    Condition: { Bool: { "aws:SecureTransport": "false" } },
  },
  {
    Sid: "DenyDeletionAndUnprotecting",
    Effect: "Deny",
    Principal: "*",
    Action: [
      "s3:PutLifecycleConfiguration",
      "s3:PutBucketVersioning",
      "s3:PutBucketPolicy",
      "s3:PutBucketObjectLockConfiguration",
      "s3:DeleteObjectVersion",
      "s3:DeleteObject",
      "s3:DeleteBucketPolicy",
      "s3:DeleteBucket",
      "s3:BypassGovernanceRetention",
    ],
    Resource: [`${ARN}/*`, ARN],
    Condition: { ArnNotEquals: { "aws:PrincipalArn": BREAK_GLASS } },
  },
  {
    Sid: "DenyOverwrite",
    Effect: "Deny",
    Principal: "*",
    Action: "s3:PutObject",
    Resource: `${ARN}/*`,
    Condition: { ArnNotEquals: { "aws:PrincipalArn": BREAK_GLASS }, Null: { "s3:if-none-match": "true" } },
  },
];
const abortRule = {
  id: "abort-incomplete-uploads",
  status: "Enabled",
  abort_incomplete_multipart_upload: [{ days_after_initiation: 1 }],
  expiration: [],
  noncurrent_version_expiration: [],
  filter: [{ tag: [] }],
};

const resource = (type: string, values: Record<string, unknown>): StateResource => ({
  address: `module.pipeline.module.quarantine_bucket.${type}.this`,
  mode: "managed",
  type,
  values,
});

function state(options: {
  statements?: PolicyStatement[];
  rules?: unknown[];
  versioning?: string;
  testTools?: string;
}): TerraformShow {
  const worker = (name: string) => ({
    address: `module.pipeline.module.sqs_consumer["${name}"].aws_lambda_function.this`,
    mode: "managed" as const,
    type: "aws_lambda_function",
    values: {
      function_name: `mcp-prod-${name.replace("_", "-")}`,
      arn: `arn:aws:lambda:eu-west-1:123456789012:function:mcp-prod-${name.replace("_", "-")}`,
      role: `arn:aws:iam::123456789012:role/mcp-prod-${name.replace("_", "-")}`,
      environment: [
        {
          variables:
            options.testTools === undefined ? { TEST_TOOLS: "off" } : { TEST_TOOLS: options.testTools },
        },
      ],
    },
  });
  return {
    values: {
      root_module: {
        resources: [
          resource("aws_s3_bucket", { bucket: BUCKET, arn: ARN }),
          resource("aws_s3_bucket_policy", {
            bucket: BUCKET,
            policy: JSON.stringify({ Version: "2012-10-17", Statement: options.statements ?? rendered }),
          }),
          resource("aws_s3_bucket_lifecycle_configuration", {
            bucket: BUCKET,
            rule: options.rules ?? [abortRule],
          }),
          resource("aws_s3_bucket_versioning", {
            bucket: BUCKET,
            versioning_configuration: [{ status: options.versioning ?? "Enabled" }],
          }),
          worker("tool_worker"),
          worker("fifo_worker"),
        ],
      },
    },
  };
}

let prod: Awaited<ReturnType<typeof loadSettings>>;
beforeAll(async () => {
  prod = await loadSettings(`${import.meta.dirname}/../../../../..`, "prod");
});

describe("the quarantine's protection, on the applied state", () => {
  it("holds as the bucket module renders it for prod's settings", () => {
    expect(prod.quarantine.break_glass_role_name).toBe("mcp-prod-quarantine-break-glass");
    expect(quarantineProtectionFindings(state({}), prod)).toEqual([]);
  });

  it("finds writes that may replace a record when the overwrite statement is gone", () => {
    const findings = quarantineProtectionFindings(
      state({ statements: rendered.filter((s) => s.Sid !== "DenyOverwrite") }),
      prod,
    );
    expect(findings).toContain(
      "quarantine: a PutObject without If-None-Match is not denied to arn:aws:iam::123456789012:role/mcp-prod-deploy",
    );
    expect(findings.every((f) => f.includes("PutObject without If-None-Match"))).toBe(true);
  });

  it("finds a deletion statement that spares nobody but forgets an action", () => {
    const statements = rendered.map((s) =>
      s.Sid === "DenyDeletionAndUnprotecting"
        ? { ...s, Action: (s.Action as string[]).filter((a) => a !== "s3:DeleteObjectVersion") }
        : s,
    );
    expect(quarantineProtectionFindings(state({ statements }), prod)).toContain(
      "quarantine: the bucket policy does not deny s3:DeleteObjectVersion to arn:aws:iam::123456789012:role/Administrator",
    );
  });

  it("finds the break-glass role locked out when the exemption is dropped", () => {
    const statements = rendered.map((s) =>
      s.Sid === "DenyDeletionAndUnprotecting" ? { ...s, Condition: undefined } : s,
    ) as PolicyStatement[];
    expect(quarantineProtectionFindings(state({ statements }), prod)).toContain(
      `quarantine: the bucket policy denies s3:DeleteObject to the break-glass role ${BREAK_GLASS}`,
    );
  });

  it("finds the old lifecycle that expired every record after 90 days", () => {
    const old = {
      ...abortRule,
      id: "expire",
      expiration: [{ days: 90 }],
      noncurrent_version_expiration: [{ noncurrent_days: 30 }],
    };
    expect(quarantineProtectionFindings(state({ rules: [old] }), prod)).toEqual([
      "quarantine: lifecycle rule expire expires objects, and the settings say never",
    ]);
  });

  it("with replayed_expiration_days, refuses a rule that expires what was not replayed", () => {
    const settings = { ...prod, quarantine: { ...prod.quarantine, replayed_expiration_days: 30 } };
    const untagged = { ...abortRule, id: "expire", expiration: [{ days: 30 }] };
    const tagged = { ...untagged, filter: [{ tag: [{ key: "replayed", value: "true" }] }] };
    expect(quarantineProtectionFindings(state({ rules: [abortRule, untagged] }), settings)).toEqual([
      "quarantine: lifecycle rule expire expires objects that were not replayed",
    ]);
    expect(quarantineProtectionFindings(state({ rules: [abortRule, tagged] }), settings)).toEqual([]);
  });

  it("finds versioning suspended and test tools on in prod", () => {
    expect(quarantineProtectionFindings(state({ versioning: "Suspended", testTools: "on" }), prod)).toEqual([
      "quarantine: versioning is not Enabled",
      "mcp-prod-tool-worker: TEST_TOOLS is on, the settings say off",
      "mcp-prod-fifo-worker: TEST_TOOLS is on, the settings say off",
    ]);
  });
});
