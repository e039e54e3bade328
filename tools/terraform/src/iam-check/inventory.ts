/**
 * Every policy a Terraform root creates, read from `terraform show -json` of its plan (tf:check saves the
 * second plan of each root after its apply on moto, when every ARN and policy document is known):
 * roles with their trust, inline and attached policies and permissions boundary; managed policies; and
 * the resource policies of buckets, queues, topics and keys.
 */
import type { PolicyDocument } from "./policy-eval.ts";

type Values = Readonly<Record<string, unknown>>;

export interface PlanResource {
  readonly address: string;
  readonly mode?: string | undefined;
  readonly type: string;
  readonly values: Readonly<Record<string, unknown>>;
}

interface PlanModule {
  readonly resources?: readonly PlanResource[];
  readonly child_modules?: readonly PlanModule[];
}

/** The part of `terraform show -json` this reads (a fixture may hold only that). */
export interface PlanJson {
  readonly planned_values: {
    readonly root_module: PlanModule;
    readonly outputs?: Readonly<Record<string, { readonly value?: unknown }>>;
  };
}

export interface Role {
  readonly address: string;
  readonly name: string;
  readonly arn: string;
  readonly path: string;
  readonly trust: PolicyDocument;
  readonly inline: readonly { readonly name: string; readonly document: PolicyDocument }[];
  /** ARNs of attached managed policies (AWS-managed ones included). */
  readonly attached: readonly string[];
  readonly boundary: string | null;
}

export interface ResourcePolicy {
  readonly address: string;
  readonly kind: "bucket" | "queue" | "topic" | "key";
  /** The resource the policy is on (bucket ARN, queue URL or ARN, topic ARN, key ARN). */
  readonly resource: string;
  readonly document: PolicyDocument;
}

/**
 * Which queues may name a queue as their dead-letter queue (its RedriveAllowPolicy): SQS checks no IAM
 * permission on the DLQ when a RedrivePolicy names it, only this. Without one, any queue of the account
 * and region may (allowAll).
 */
export type RedriveAllow =
  | { readonly permission: "allowAll" | "denyAll" }
  | { readonly permission: "byQueue"; readonly sources: readonly string[] };

export interface Queue {
  readonly arn: string;
  readonly redriveAllow: RedriveAllow;
}

export interface Inventory {
  /** The root's name: dev, prod, bootstrap. */
  readonly root: string;
  readonly roles: readonly Role[];
  /** Customer-managed policies the root creates, by ARN. */
  readonly managedPolicies: ReadonlyMap<string, PolicyDocument>;
  readonly resourcePolicies: readonly ResourcePolicy[];
  /** Every ARN of every resource the root creates (what another environment's roles must not reach). */
  readonly arns: readonly string[];
  /** Its SQS queues and who may dead-letter into each (absent in inventories made by hand). */
  readonly queues?: readonly Queue[];
}

export class InventoryError extends Error {
  override readonly name = "InventoryError";
  constructor(
    readonly root: string,
    readonly address: string,
    problem: string,
  ) {
    super(`${root}: ${address}: ${problem}`);
  }
}

function allResources(module: PlanModule): PlanResource[] {
  return [...(module.resources ?? []), ...(module.child_modules ?? []).flatMap(allResources)];
}

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

function parseDocument(root: string, address: string, value: unknown): PolicyDocument {
  const text = str(value);
  if (text === null)
    throw new InventoryError(root, address, "its policy document is not known (plan before apply?)");
  try {
    const doc = JSON.parse(text) as PolicyDocument;
    if (doc.Statement === undefined) throw new Error("no Statement");
    return doc;
  } catch (error) {
    throw new InventoryError(root, address, `not a policy document: ${(error as Error).message}`);
  }
}

function redriveAllow(root: string, address: string, value: unknown): RedriveAllow {
  const text = str(value);
  if (text === null) return { permission: "allowAll" };
  const parsed = JSON.parse(text) as { redrivePermission?: string; sourceQueueArns?: string[] };
  switch (parsed.redrivePermission) {
    case "allowAll":
    case "denyAll":
      return { permission: parsed.redrivePermission };
    case "byQueue":
      return { permission: "byQueue", sources: parsed.sourceQueueArns ?? [] };
    default:
      throw new InventoryError(root, address, `redrive allow policy ${text}: unknown redrivePermission`);
  }
}

export function inventory(root: string, plan: PlanJson): Inventory {
  const resources = allResources(plan.planned_values.root_module).filter((r) => r.mode !== "data");
  const of: ResourcesOf = (type) => resources.filter((r) => r.type === type);
  const roles = rolesOf(root, of);
  const managedPolicies = managedPoliciesOf(root, of);
  const resourcePolicies = resourcePoliciesOf(root, of);
  const arns = [...new Set(resources.map((r) => str(r.values.arn)).filter((a): a is string => a !== null))];
  const queues = of("aws_sqs_queue").flatMap((q) => {
    const arn = str(q.values.arn);
    return arn === null
      ? []
      : [{ arn, redriveAllow: redriveAllow(root, q.address, q.values.redrive_allow_policy) }];
  });
  return { root, roles, managedPolicies, resourcePolicies, arns, queues };
}

/** The root's managed resources of one Terraform type. */
type ResourcesOf = (type: string) => PlanResource[];

/** Each role with its trust, its inline and attached policies (by its name or id) and its boundary. */
function rolesOf(root: string, of: ResourcesOf): Role[] {
  const roleKey = (r: PlanResource) => str(r.values.role);
  return of("aws_iam_role").map((r) => {
    const name = str(r.values.name);
    const arn = str(r.values.arn);
    if (name === null || arn === null) throw new InventoryError(root, r.address, "role without name or ARN");
    const mine = (p: PlanResource) => roleKey(p) === name || roleKey(p) === str(r.values.id);
    return {
      address: r.address,
      name,
      arn,
      path: str(r.values.path) ?? "/",
      trust: parseDocument(root, r.address, r.values.assume_role_policy),
      inline: of("aws_iam_role_policy")
        .filter(mine)
        .map((p) => ({
          name: str(p.values.name) ?? p.address,
          document: parseDocument(root, p.address, p.values.policy),
        })),
      attached: of("aws_iam_role_policy_attachment")
        .filter(mine)
        .map((p) => str(p.values.policy_arn) ?? ""),
      boundary: str(r.values.permissions_boundary),
    };
  });
}

function managedPoliciesOf(root: string, of: ResourcesOf): Map<string, PolicyDocument> {
  return new Map(
    of("aws_iam_policy").map((p) => {
      const arn = str(p.values.arn);
      if (arn === null) throw new InventoryError(root, p.address, "managed policy without ARN");
      return [arn, parseDocument(root, p.address, p.values.policy)] as const;
    }),
  );
}

function resourcePoliciesOf(root: string, of: ResourcesOf): ResourcePolicy[] {
  // Each resource-policy type: its kind, and the attribute that names the resource it is on.
  const policyTypes = [
    ["aws_s3_bucket_policy", "bucket", (v: Values) => `arn:aws:s3:::${str(v.bucket)}`],
    ["aws_sqs_queue_policy", "queue", (v: Values) => str(v.queue_url)],
    ["aws_sns_topic_policy", "topic", (v: Values) => str(v.arn)],
    ["aws_kms_key", "key", (v: Values) => str(v.arn)],
  ] as const;
  const resourcePolicies: ResourcePolicy[] = policyTypes.flatMap(([type, kind, resource]) =>
    of(type).map((p) => ({
      address: p.address,
      kind,
      resource: resource(p.values) ?? p.address,
      document: parseDocument(root, p.address, p.values.policy),
    })),
  );
  // The policy a topic holds, as read back after the apply: the one an aws_sns_topic_policy set, or, with
  // none, SNS's default, which lets every principal of the account publish, subscribe, change or delete
  // the topic (a policy no root renders, but the topic has it all the same).
  for (const t of of("aws_sns_topic"))
    if (typeof t.values.policy === "string" && t.values.policy !== "")
      resourcePolicies.push({
        address: t.address,
        kind: "topic",
        resource: str(t.values.arn) ?? t.address,
        document: parseDocument(root, t.address, t.values.policy),
      });
  return resourcePolicies;
}

/** A plan reduced to what `inventory` reads (for committed fixtures). */
export function trimPlan(plan: PlanJson): PlanJson {
  const keep = [
    "arn",
    "id",
    "name",
    "path",
    "role",
    "policy",
    "policy_arn",
    "assume_role_policy",
    "permissions_boundary",
    "bucket",
    "queue_url",
    "url",
    "redrive_allow_policy",
  ];
  const trim = (m: PlanModule): PlanModule => ({
    resources: (m.resources ?? [])
      .filter((r) => r.mode !== "data")
      .map((r) => ({
        address: r.address,
        mode: r.mode,
        type: r.type,
        values: Object.fromEntries(
          Object.entries(r.values).filter(([k, v]) => keep.includes(k) && v !== null),
        ),
      })),
    child_modules: (m.child_modules ?? []).map(trim),
  });
  // Outputs are kept: bootstrap's github_oidc_subject_claim_keys is the template github-trust renders with.
  return {
    planned_values: {
      root_module: trim(plan.planned_values.root_module),
      ...(plan.planned_values.outputs ? { outputs: plan.planned_values.outputs } : {}),
    },
  };
}
