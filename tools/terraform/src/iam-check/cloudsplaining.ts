/**
 * cloudsplaining (PyPI, installed pinned by .ci/python-tools.sh) over every role the roots create: its
 * account-authorization-details input is written from the inventories, its per-policy results are read
 * back, and each finding must be listed in accepted-findings.json with a written reason or the check
 * fails. Two runs: the default one (actions without resource constraints) must show no privilege
 * escalation, data exfiltration, credentials exposure or resource exposure; the one with
 * --flag-all-risky-actions lists every resource-exposure action whatever its constraints, each of which
 * needs its reason too (docs/security.md, "The checks").
 */
import { execFile } from "node:child_process";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify, stripVTControlCharacters } from "node:util";
import type { Inventory } from "./inventory.ts";

const run = promisify(execFile);

export const CATEGORIES = [
  "PrivilegeEscalation",
  "ResourceExposure",
  "DataExfiltration",
  "CredentialsExposure",
  "InfrastructureModification",
  "ServiceWildcard",
] as const;
export type Category = (typeof CATEGORIES)[number];
export type Mode = "default" | "all-risky-actions";

/** What must be zero in each mode, whatever accepted-findings.json says. */
export const NEVER_ACCEPTED: Readonly<Record<Mode, readonly Category[]>> = {
  default: ["PrivilegeEscalation", "DataExfiltration", "CredentialsExposure", "ServiceWildcard"],
  "all-risky-actions": [],
};
/** The categories read in each mode (the second run is only for resource exposure). */
export const READ: Readonly<Record<Mode, readonly Category[]>> = {
  default: CATEGORIES,
  "all-risky-actions": ["ResourceExposure"],
};

export interface CloudsplainingFinding {
  readonly mode: Mode;
  readonly category: Category;
  /** Role names the policy is attached to. */
  readonly roles: readonly string[];
  readonly policy: string;
  /** An action, or a privilege-escalation method. */
  readonly item: string;
}

export interface Acceptance {
  readonly mode: Mode;
  readonly category: Category;
  /** A regular expression over role names (e.g. "^mcp-[a-z0-9]+-deploy$"). */
  readonly roles: string;
  readonly items: readonly string[];
  readonly reason: string;
}

export class AcceptedFindingsError extends Error {
  override readonly name = "AcceptedFindingsError";
}

export function parseAcceptances(text: string, file: string): Acceptance[] {
  const value = JSON.parse(text) as { accepted?: unknown };
  if (!Array.isArray(value.accepted)) throw new AcceptedFindingsError(`${file}: no "accepted" list`);
  return value.accepted.map((a: Partial<Acceptance>, i) => {
    const where = `${file}: accepted[${i}]`;
    if (a.mode !== "default" && a.mode !== "all-risky-actions")
      throw new AcceptedFindingsError(`${where}: mode`);
    if (!CATEGORIES.includes(a.category as Category)) throw new AcceptedFindingsError(`${where}: category`);
    if (NEVER_ACCEPTED[a.mode].includes(a.category as Category))
      throw new AcceptedFindingsError(`${where}: ${a.category} in the ${a.mode} run is never accepted`);
    if (typeof a.roles !== "string" || !Array.isArray(a.items) || a.items.length === 0)
      throw new AcceptedFindingsError(`${where}: roles (a pattern) and items (a list) are required`);
    if (typeof a.reason !== "string" || a.reason.trim().split(/\s+/).length < 8)
      throw new AcceptedFindingsError(`${where}: a reason of at least a sentence is required`);
    return a as Acceptance;
  });
}

/** The input cloudsplaining reads: `aws iam get-account-authorization-details`, for the roots' roles. */
export function authorizationDetails(inventories: readonly Inventory[]): unknown {
  const roles = inventories.flatMap((inv) => inv.roles);
  const managed = new Map(inventories.flatMap((inv) => [...inv.managedPolicies]));
  // Boundaries are limits, not grants: cloudsplaining would read them as permissions.
  const boundaries = new Set(roles.map((r) => r.boundary));
  return {
    UserDetailList: [],
    GroupDetailList: [],
    RoleDetailList: roles.map((r) => ({
      Path: r.path,
      RoleName: r.name,
      RoleId: `AROA${r.name.toUpperCase().replace(/[^A-Z0-9]/g, "")}`,
      Arn: r.arn,
      CreateDate: "2026-01-01T00:00:00Z",
      AssumeRolePolicyDocument: r.trust,
      InstanceProfileList: [],
      RolePolicyList: r.inline.map((p) => ({
        PolicyName: `${r.name}/${p.name}`,
        PolicyDocument: p.document,
      })),
      AttachedManagedPolicies: r.attached.map((arn) => ({
        PolicyName: arn.split("/").pop(),
        PolicyArn: arn,
      })),
      Tags: [],
    })),
    Policies: [...managed]
      .filter(([arn]) => !boundaries.has(arn))
      .map(([arn, document]) => ({
        PolicyName: arn.split("/").pop(),
        PolicyId: arn,
        Arn: arn,
        Path: "/",
        DefaultVersionId: "v1",
        AttachmentCount: roles.filter((r) => r.attached.includes(arn)).length,
        IsAttachable: true,
        PolicyVersionList: [{ Document: document, VersionId: "v1", IsDefaultVersion: true }],
      })),
  };
}

interface ResultPolicy {
  readonly PolicyName: string;
  readonly AttachedTo?: { readonly roles?: Record<string, string> | string[] };
  readonly [category: string]: unknown;
}

/** The findings of one results file (iam-results-*.json), in the categories `read`. */
export function parseResults(text: string, mode: Mode): CloudsplainingFinding[] {
  const results = JSON.parse(text) as Record<string, Record<string, ResultPolicy>>;
  const out: CloudsplainingFinding[] = [];
  for (const group of ["inline_policies", "customer_managed_policies", "aws_managed_policies"])
    for (const policy of Object.values(results[group] ?? {})) {
      const attached = policy.AttachedTo?.roles ?? [];
      const roles = Array.isArray(attached) ? attached : Object.values(attached);
      for (const category of READ[mode]) {
        const findings = (policy[category] as { findings?: unknown[] } | undefined)?.findings ?? [];
        for (const f of findings) {
          const item = typeof f === "string" ? f : String((f as { type?: string }).type ?? JSON.stringify(f));
          out.push({ mode, category, roles, policy: policy.PolicyName, item });
        }
      }
    }
  return out;
}

export function unexplained(findings: readonly CloudsplainingFinding[], accepted: readonly Acceptance[]) {
  const used = new Set<Acceptance>();
  const open = findings.filter((f) => {
    const a = accepted.find(
      (a) =>
        a.mode === f.mode &&
        a.category === f.category &&
        f.roles.length > 0 &&
        f.roles.every((r) => new RegExp(a.roles).test(r)) &&
        a.items.some((i) => i.toLowerCase() === f.item.toLowerCase()),
    );
    if (a !== undefined) used.add(a);
    return a === undefined || NEVER_ACCEPTED[f.mode].includes(f.category);
  });
  return { open, unused: accepted.filter((a) => !used.has(a)) };
}

/** Runs cloudsplaining on the inventories in `workDir`, both modes; returns every finding. */
export async function scan(
  cloudsplaining: string,
  inventories: readonly Inventory[],
  workDir: string,
): Promise<CloudsplainingFinding[]> {
  await mkdir(workDir, { recursive: true });
  const input = join(workDir, "authorization-details.json");
  await writeFile(input, `${JSON.stringify(authorizationDetails(inventories), null, 1)}\n`);
  const findings: CloudsplainingFinding[] = [];
  for (const mode of ["default", "all-risky-actions"] as const) {
    const out = join(workDir, mode);
    await mkdir(out, { recursive: true });
    const args = [
      "scan",
      "--input-file",
      input,
      "--output",
      out,
      "--skip-open-report",
      "--flag-trust-policies",
    ];
    if (mode === "all-risky-actions") args.push("--flag-all-risky-actions");
    const { stdout, stderr } = await run(cloudsplaining, args, { maxBuffer: 64 * 1024 * 1024 });
    // cloudsplaining goes on after a policy it cannot read (an AWS-managed ARN it does not know), saying
    // so in red: such a policy was not analysed, which the check must not pass as "no findings".
    const unread = `${stdout}\n${stderr}`.split("\n").filter((l) => /Error in role/.test(l));
    for (const line of unread)
      findings.push({
        mode,
        category: "ServiceWildcard",
        roles: [/role (\S+):/.exec(line)?.[1] ?? "?"],
        policy: "(unread)",
        item: stripVTControlCharacters(line).trim(),
      });
    const file = (await readdir(out)).find((f) => f.startsWith("iam-results-"));
    if (file === undefined)
      throw new Error(`cloudsplaining wrote no iam-results file in ${out}:\n${stdout}\n${stderr}`);
    findings.push(...parseResults(await readFile(join(out, file), "utf8"), mode));
  }
  return findings;
}
