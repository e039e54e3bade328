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

/** The statement applied to every principal and request. */
const unconditional = ({ Condition: _, ...statement }: PolicyStatement): PolicyStatement => statement;

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
  /** The bucket's default retention, as the bucket module applies it when object_lock_mode is not off. */
  objectLock?: { mode: string; days: number } | undefined;
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
          ...(options.objectLock === undefined
            ? []
            : [
                resource("aws_s3_bucket_object_lock_configuration", {
                  bucket: BUCKET,
                  rule: [{ default_retention: [options.objectLock] }],
                }),
              ]),
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

  it("with replayed_expiration_days, lets the replay journals (replays/) expire, and no other prefix", () => {
    const settings = { ...prod, quarantine: { ...prod.quarantine, replayed_expiration_days: 30 } };
    const tagged = {
      ...abortRule,
      id: "expire",
      expiration: [{ days: 30 }],
      filter: [{ tag: [{ key: "replayed", value: "true" }] }],
    };
    const journals = {
      ...abortRule,
      id: "expire-prefix",
      expiration: [{ days: 30 }],
      filter: [{ prefix: "replays/" }],
    };
    const records = { ...journals, filter: [{ prefix: "kinesis/" }] };
    expect(quarantineProtectionFindings(state({ rules: [abortRule, tagged, journals] }), settings)).toEqual(
      [],
    );
    expect(quarantineProtectionFindings(state({ rules: [abortRule, tagged, records] }), settings)).toEqual([
      "quarantine: lifecycle rule expire-prefix expires objects that were not replayed",
    ]);
    // The journals' rule alone does not expire what was replayed.
    expect(quarantineProtectionFindings(state({ rules: [abortRule, journals] }), settings)).toEqual([
      "quarantine: the settings expire replayed records, and no lifecycle rule does",
    ]);
  });

  it("finds versioning suspended and test tools on in prod", () => {
    expect(quarantineProtectionFindings(state({ versioning: "Suspended", testTools: "on" }), prod)).toEqual([
      "quarantine: versioning is not Enabled",
      "mcp-prod-tool-worker: TEST_TOOLS is on, the settings say off",
      "mcp-prod-fifo-worker: TEST_TOOLS is on, the settings say off",
    ]);
  });

  it("finds no bucket to judge when the state holds none of the quarantine's name", () => {
    const show = state({});
    const resources = show.values?.root_module?.resources ?? [];
    const others = resources.filter((r) => r.type !== "aws_s3_bucket");
    expect(quarantineProtectionFindings({ values: { root_module: { resources: others } } }, prod)).toEqual([
      "quarantine: no bucket mcp-prod-quarantine-<account> in the state",
    ]);
  });

  it("without a bucket policy, finds it missing and every request it should deny allowed", () => {
    const show = state({});
    const resources = show.values?.root_module?.resources ?? [];
    const withoutPolicy = resources.filter((r) => r.type !== "aws_s3_bucket_policy");
    const findings = quarantineProtectionFindings(
      { values: { root_module: { resources: withoutPolicy } } },
      prod,
    );
    expect(findings[0]).toBe("quarantine: no bucket policy");
    // Four principals (deploy, the two workers, an administrator), each allowed every break-glass
    // action and a PutObject without If-None-Match.
    expect(findings).toHaveLength(1 + 4 * 9 + 4);
    expect(findings).toContain(
      "quarantine: the bucket policy does not deny s3:DeleteBucket to arn:aws:iam::123456789012:role/mcp-prod-tool-worker",
    );
    expect(findings.some((f) => f.includes("break-glass"))).toBe(false);
  });

  it("finds a policy that denies even the conditional write a quarantine put makes", () => {
    const statements = rendered.map((s) => (s.Sid === "DenyOverwrite" ? unconditional(s) : s));
    expect(quarantineProtectionFindings(state({ statements }), prod)).toEqual([
      "quarantine: a PutObject with If-None-Match: * is denied to arn:aws:iam::123456789012:role/mcp-prod-deploy",
      "quarantine: a PutObject with If-None-Match: * is denied to arn:aws:iam::123456789012:role/mcp-prod-tool-worker",
      "quarantine: a PutObject with If-None-Match: * is denied to arn:aws:iam::123456789012:role/mcp-prod-fifo-worker",
      "quarantine: a PutObject with If-None-Match: * is denied to arn:aws:iam::123456789012:role/Administrator",
    ]);
  });

  it("without a break-glass role in the settings, asks nothing of its exemption", () => {
    const settings = { ...prod, quarantine: { ...prod.quarantine, break_glass_role_name: null } };
    const statements = rendered.map(unconditional);
    // Denied to everyone, as a bucket without a break-glass role renders it: only the conditional write
    // is wrongly denied; no finding about a break-glass role.
    const findings = quarantineProtectionFindings(state({ statements }), settings);
    expect(findings.some((f) => f.includes("break-glass"))).toBe(false);
    expect(findings.every((f) => f.includes("If-None-Match: * is denied"))).toBe(true);
  });

  it("with replayed_expiration_days, finds no lifecycle rule that expires what was replayed", () => {
    const settings = { ...prod, quarantine: { ...prod.quarantine, replayed_expiration_days: 30 } };
    expect(quarantineProtectionFindings(state({ rules: [abortRule] }), settings)).toEqual([
      "quarantine: the settings expire replayed records, and no lifecycle rule does",
    ]);
  });

  it("finds Object Lock on where the settings say off, and off or other than the settings say", () => {
    expect(
      quarantineProtectionFindings(state({ objectLock: { mode: "GOVERNANCE", days: 365 } }), prod),
    ).toEqual(["quarantine: Object Lock is on, and the settings say off"]);
    const locked = {
      ...prod,
      quarantine: { ...prod.quarantine, object_lock_mode: "GOVERNANCE" as const, object_lock_days: 90 },
    };
    expect(
      quarantineProtectionFindings(state({ objectLock: { mode: "GOVERNANCE", days: 90 } }), locked),
    ).toEqual([]);
    for (const objectLock of [undefined, { mode: "COMPLIANCE", days: 90 }, { mode: "GOVERNANCE", days: 30 }])
      expect(quarantineProtectionFindings(state({ objectLock }), locked)).toEqual([
        "quarantine: Object Lock is not GOVERNANCE for 90 days",
      ]);
  });

  it("asks nothing of a test-tools function the state does not hold", () => {
    const show = state({ testTools: "on" });
    const resources = show.values?.root_module?.resources ?? [];
    const noFifoWorker = resources.filter((r) => !r.address.includes("fifo_worker"));
    expect(
      quarantineProtectionFindings({ values: { root_module: { resources: noFifoWorker } } }, prod),
    ).toEqual(["mcp-prod-tool-worker: TEST_TOOLS is on, the settings say off"]);
  });
});
