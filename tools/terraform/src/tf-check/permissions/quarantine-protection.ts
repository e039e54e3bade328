/**
 * What protects the quarantine, the only copy of the records the pipeline could not apply, judged on the
 * applied state (docs/security.md, "Runtime"): its bucket policy, evaluated as S3 would for the requests
 * that could lose a record, and its lifecycle, versioning and Object Lock against the settings. Also that
 * the workers offer the test tools exactly where the settings say (issue 25 items 10 and 11).
 */
import { type EnvironmentSettings, resourceNames, testTools } from "@mcp-pipeline/settings";
import { decide, type PolicyDocument } from "./policy.ts";
import { DeployedState, type StateResource, type TerraformShow } from "./terraform-state.ts";

/** What only the break-glass role may do: each loses records or takes a protection away. */
export const BREAK_GLASS_ONLY: readonly { readonly action: string; readonly on: "bucket" | "object" }[] = [
  { action: "s3:DeleteObject", on: "object" },
  { action: "s3:DeleteObjectVersion", on: "object" },
  { action: "s3:BypassGovernanceRetention", on: "object" },
  { action: "s3:DeleteBucket", on: "bucket" },
  { action: "s3:PutLifecycleConfiguration", on: "bucket" },
  { action: "s3:PutBucketVersioning", on: "bucket" },
  { action: "s3:PutBucketObjectLockConfiguration", on: "bucket" },
  { action: "s3:PutBucketPolicy", on: "bucket" },
  { action: "s3:DeleteBucketPolicy", on: "bucket" },
];

const text = (value: unknown): string => (typeof value === "string" ? value : "");
const blocks = (value: unknown): readonly Readonly<Record<string, unknown>>[] =>
  Array.isArray(value) ? (value as Readonly<Record<string, unknown>>[]) : [];

export function quarantineProtectionFindings(show: TerraformShow, settings: EnvironmentSettings): string[] {
  const state = new DeployedState(show);
  const names = resourceNames(settings.name_prefix);
  const bucket = QuarantineBucket.in(state, names.quarantineBucket);
  if (bucket === undefined) return [`quarantine: no bucket ${names.quarantineBucket}-<account> in the state`];
  const policyText = text(bucket.of("aws_s3_bucket_policy")?.values.policy);
  const policy = policyText === "" ? [] : [JSON.parse(policyText) as PolicyDocument];
  const others = otherPrincipals(state, settings, bucket.account);
  return [
    ...(policyText === "" ? ["quarantine: no bucket policy"] : []),
    ...breakGlassOnlyFindings(policy, bucket, others, breakGlassRole(settings, bucket.account)),
    ...overwriteFindings(policy, bucket, others),
    ...versioningFindings(bucket),
    ...lifecycleFindings(bucket, settings),
    ...objectLockFindings(bucket, settings),
    ...testToolsFindings(state, settings),
  ];
}

/** The quarantine's bucket in the state, and the resources that configure it. */
class QuarantineBucket {
  private constructor(
    private readonly state: DeployedState,
    readonly name: string,
    readonly arn: string,
    /** The account the bucket is in: it is named <prefix>-quarantine-<account id>. */
    readonly account: string,
  ) {}

  static in(state: DeployedState, namePrefix: string): QuarantineBucket | undefined {
    const bucket = state
      .ofType("aws_s3_bucket")
      .find((b) => text(b.values.bucket).startsWith(`${namePrefix}-`));
    if (bucket === undefined) return undefined;
    const name = text(bucket.values.bucket);
    return new QuarantineBucket(state, name, text(bucket.values.arn), name.slice(namePrefix.length + 1));
  }

  /** An object where a quarantined record is written: what the object statements must hold for. */
  get objectArn(): string {
    return `${this.arn}/kinesis/events/2026/12/03/shardId-000000000000/1.json`;
  }

  of(type: string): StateResource | undefined {
    return this.state.ofType(type).find((r) => text(r.values.bucket) === this.name);
  }
}

/** The break-glass role's ARN, when the settings name one. */
function breakGlassRole(settings: EnvironmentSettings, account: string): string | undefined {
  return settings.quarantine.break_glass_role_name === null
    ? undefined
    : `arn:aws:iam::${account}:role/${settings.quarantine.break_glass_role_name}`;
}

/** Anyone else: the deploy role, a function's role, an administrator's. */
function otherPrincipals(state: DeployedState, settings: EnvironmentSettings, account: string): string[] {
  return [
    `arn:aws:iam::${account}:role/${settings.name_prefix}-deploy`,
    ...state.functions().map((fn) => fn.roleArn),
    `arn:aws:iam::${account}:role/Administrator`,
  ];
}

const SECURE = { "aws:securetransport": "true" };

/** Each break-glass-only action denied to everyone else, and not to the break-glass role. */
function breakGlassOnlyFindings(
  policy: readonly PolicyDocument[],
  bucket: QuarantineBucket,
  others: readonly string[],
  breakGlass: string | undefined,
): string[] {
  const findings: string[] = [];
  for (const { action, on } of BREAK_GLASS_ONLY) {
    const resource = on === "bucket" ? bucket.arn : bucket.objectArn;
    for (const principalArn of others)
      if (decide(policy, { action, resource, principalArn, context: SECURE }) !== "explicitly-denied")
        findings.push(`quarantine: the bucket policy does not deny ${action} to ${principalArn}`);
    if (
      breakGlass !== undefined &&
      decide(policy, { action, resource, principalArn: breakGlass, context: SECURE }) === "explicitly-denied"
    )
      findings.push(`quarantine: the bucket policy denies ${action} to the break-glass role ${breakGlass}`);
  }
  return findings;
}

/** A put that could replace a record (no If-None-Match) denied; the quarantine's own (If-None-Match: *) not. */
function overwriteFindings(
  policy: readonly PolicyDocument[],
  bucket: QuarantineBucket,
  others: readonly string[],
): string[] {
  const findings: string[] = [];
  for (const principalArn of others) {
    const put = (context: Record<string, string>) =>
      decide(policy, {
        action: "s3:PutObject",
        resource: bucket.objectArn,
        principalArn,
        context: { ...SECURE, ...context },
      });
    if (put({}) !== "explicitly-denied")
      findings.push(`quarantine: a PutObject without If-None-Match is not denied to ${principalArn}`);
    if (put({ "s3:if-none-match": "*" }) === "explicitly-denied")
      findings.push(`quarantine: a PutObject with If-None-Match: * is denied to ${principalArn}`);
  }
  return findings;
}

function versioningFindings(bucket: QuarantineBucket): string[] {
  const versioning = blocks(bucket.of("aws_s3_bucket_versioning")?.values.versioning_configuration)[0];
  return text(versioning?.status) === "Enabled" ? [] : ["quarantine: versioning is not Enabled"];
}

/**
 * Nothing expires unless the settings say so, and then only what was replayed (tagged replayed=true) and the
 * replay journals that name it (replays/).
 */
function lifecycleFindings(bucket: QuarantineBucket, settings: EnvironmentSettings): string[] {
  const findings: string[] = [];
  const rules = blocks(bucket.of("aws_s3_bucket_lifecycle_configuration")?.values.rule).filter(
    (r) => text(r.status) === "Enabled",
  );
  // The replay journals (replays/) hold no record: each names objects tagged replayed.
  const journals = (rule: Readonly<Record<string, unknown>>) =>
    text(blocks(rule.filter)[0]?.prefix) === "replays/" && blocks(blocks(rule.filter)[0]?.tag).length === 0;
  for (const rule of rules) {
    if (blocks(rule.expiration).length === 0 && blocks(rule.noncurrent_version_expiration).length === 0)
      continue;
    const tag = blocks(blocks(rule.filter)[0]?.tag)[0];
    if (settings.quarantine.replayed_expiration_days === null)
      findings.push(
        `quarantine: lifecycle rule ${text(rule.id)} expires objects, and the settings say never`,
      );
    else if (!journals(rule) && (text(tag?.key) !== "replayed" || text(tag?.value) !== "true"))
      findings.push(`quarantine: lifecycle rule ${text(rule.id)} expires objects that were not replayed`);
  }
  if (
    settings.quarantine.replayed_expiration_days !== null &&
    rules.every((r) => journals(r) || blocks(r.expiration).length === 0)
  )
    findings.push("quarantine: the settings expire replayed records, and no lifecycle rule does");
  return findings;
}

function objectLockFindings(bucket: QuarantineBucket, settings: EnvironmentSettings): string[] {
  const lock = blocks(
    blocks(bucket.of("aws_s3_bucket_object_lock_configuration")?.values.rule)[0]?.default_retention,
  )[0];
  const mode = settings.quarantine.object_lock_mode;
  if (mode === "off")
    return lock === undefined ? [] : ["quarantine: Object Lock is on, and the settings say off"];
  return text(lock?.mode) !== mode || Number(lock?.days) !== settings.quarantine.object_lock_days
    ? [`quarantine: Object Lock is not ${mode} for ${settings.quarantine.object_lock_days} days`]
    : [];
}

/** The workers offer the test tools exactly where the settings say. */
function testToolsFindings(state: DeployedState, settings: EnvironmentSettings): string[] {
  const names = resourceNames(settings.name_prefix);
  const expected = testTools.value(settings.test_tools);
  const findings: string[] = [];
  for (const key of testTools.functions) {
    const fn = state.functions().find((f) => f.name === names.functions[key]);
    const variable = testTools.variable(key) ?? "";
    if (fn !== undefined && fn.environment[variable] !== expected)
      findings.push(
        `${fn.name}: ${variable} is ${fn.environment[variable] ?? "unset"}, the settings say ${expected}`,
      );
  }
  return findings;
}
