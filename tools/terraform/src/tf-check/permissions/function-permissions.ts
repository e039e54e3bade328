/**
 * Every AWS call a function's code can make is allowed by its role, and its role allows nothing that
 * neither its code nor Lambda does for it (least privilege, issue 25 item 9). The calls come from the
 * bundle the build made (sdk-calls.ts) and what they act on from the deployed function (code-targets.ts);
 * Lambda's own from the deployed mappings (lambda-needs.ts); the role's policies from the applied state,
 * as Terraform rendered them and AWS holds them. Pure: the state and the calls are given.
 */
import { CODE_TARGETS, serviceOf, type Target } from "./code-targets.ts";
import { PERMISSIONS, type Permission } from "./iam-actions.ts";
import { lambdaNeeds, type Need } from "./lambda-needs.ts";
import { decide, list, matchesPattern, type PolicyDocument, statementsOf } from "./policy.ts";
import type { BundleCalls } from "./sdk-calls.ts";
import type { DeployedFunction, DeployedState } from "./terraform-state.ts";

export const FindingKind = {
  /** A call the code or Lambda makes that the role does not allow: denied on AWS. */
  Missing: "missing",
  /** An action the role allows on a resource that nothing calls there: least privilege. */
  Unused: "unused",
  /** What the check cannot judge: an undeclared module, an operation without an IAM mapping... */
  Unchecked: "unchecked",
} as const;
export type FindingKind = (typeof FindingKind)[keyof typeof FindingKind];

export interface PermissionFinding {
  readonly function: string;
  readonly kind: FindingKind;
  readonly message: string;
}

/** A target's ARNs: the resource, and for S3 the bucket and a sample object under its prefix. */
interface Resolved {
  readonly service: string;
  readonly resource?: string;
  readonly bucket?: string;
  readonly object?: string;
}

function resolve(
  target: Target,
  fn: DeployedFunction,
  state: DeployedState,
  functionNamed: (key: string) => DeployedFunction | undefined,
): Resolved[] | string {
  const env = "env" in target ? fn.environment[target.env] : undefined;
  if ("env" in target && env === undefined) return `${target.env} is not in its environment`;
  const found = (arn: string | undefined, what: string): Resolved[] | string =>
    arn === undefined ? `no ${what} in the state` : [{ service: serviceOf(target), resource: arn }];
  switch (target.kind) {
    case "table":
      return found(state.arnOf("aws_dynamodb_table", "name", env as string), `table ${env}`);
    case "stream":
      return found(state.arnOf("aws_kinesis_stream", "name", env as string), `stream ${env}`);
    case "queue":
      return found(state.queueArnByUrl(env as string), `queue at ${env}`);
    case "source-queue": {
      const sources = fn.mappings.map((m) => m.source).filter((s) => s.includes(":sqs:"));
      return sources.length === 0
        ? "no SQS mapping"
        : sources.map((resource) => ({ service: "sqs", resource }));
    }
    case "objects": {
      const bucket = state.arnOf("aws_s3_bucket", "bucket", env as string);
      if (bucket === undefined) return `no bucket ${env} in the state`;
      return [{ service: "s3", bucket, object: `${bucket}/${target.prefix}example-key.json` }];
    }
    case "redrive": {
      const out: Resolved[] = [];
      for (const key of target.consumers) {
        const consumer = functionNamed(key);
        const source = consumer?.mappings.find((m) => m.source.includes(":sqs:"))?.source;
        if (source === undefined) return `no SQS mapping of ${key}`;
        const arn = target.side === "source" ? source : state.deadLetterQueueOf(source);
        if (arn === undefined) return `no DLQ of ${source}`;
        out.push({ service: "sqs", resource: arn });
      }
      return out;
    }
  }
}

/** A call of a module placed on its declared targets, with the permissions it needs. */
export interface PlacedCall {
  readonly operation: string;
  readonly module: string;
  readonly permissions: readonly Permission[];
  readonly on: readonly Target[];
}

/**
 * The bundle's calls placed on what code-targets.ts says they act on, without the state: what can be judged
 * from the build alone (npm test does, scripts/test/integration/function-calls.test.ts). `problems` are what the check
 * cannot judge: an operation without an IAM mapping, a module without targets, a stale entry...
 */
export function placeCalls(name: string, calls: BundleCalls): { placed: PlacedCall[]; problems: string[] } {
  const placed: PlacedCall[] = [];
  const problems: string[] = [];
  const uses = CODE_TARGETS[name];
  if (uses === undefined) return { placed, problems: [`no entry in code-targets.ts for ${name}`] };
  const usedEntries = new Set<number>();
  for (const pkg of calls.unreadable ?? [])
    problems.push(
      `its bundle holds ${pkg} without a module per command (a CommonJS build or an aggregated client): which calls it sends cannot be read`,
    );
  for (const unattributed of calls.unattributed)
    problems.push(
      `its bundle holds ${unattributed}, which none of its modules constructs and NEVER_SENT does not list`,
    );
  for (const call of calls.calls) {
    const permissions = PERMISSIONS[call.operation];
    if (permissions === undefined) {
      problems.push(
        `${call.operation} (sent by ${call.modules.join(", ")}) has no IAM mapping in iam-actions.ts`,
      );
      continue;
    }
    const service = call.operation.slice(0, call.operation.indexOf(":"));
    for (const module of call.modules) {
      const entries = uses
        .map((use, i) => ({ use, i }))
        .filter(
          ({ use }) => use.module === module && (use.operations ?? [call.operation]).includes(call.operation),
        );
      if (entries.length === 0) {
        problems.push(`${module} sends ${call.operation}, and code-targets.ts does not say on what`);
        continue;
      }
      for (const { use, i } of entries) {
        usedEntries.add(i);
        const wrong = use.on.filter((t) => serviceOf(t) !== service);
        if (wrong.length > 0)
          problems.push(
            `${module} sends ${call.operation}, but its declared targets are not ${service} resources`,
          );
        placed.push({
          operation: call.operation,
          module,
          permissions,
          on: use.on.filter((t) => serviceOf(t) === service),
        });
      }
    }
  }
  uses.forEach((use, i) => {
    if (!usedEntries.has(i))
      problems.push(
        `code-targets.ts lists ${use.module} (${(use.operations ?? ["every operation"]).join(", ")}) for ${name}, but its bundle sends none of it: stale`,
      );
  });
  return { placed, problems };
}

/** The permissions a function's code needs: its placed calls, their targets resolved in the state. */
function codeNeeds(
  name: string,
  fn: DeployedFunction,
  calls: BundleCalls,
  state: DeployedState,
  functionNamed: (key: string) => DeployedFunction | undefined,
  unchecked: (message: string) => void,
): Need[] {
  const { placed, problems } = placeCalls(name, calls);
  for (const problem of problems) unchecked(problem);
  const needs: Need[] = [];
  for (const call of placed)
    for (const target of call.on) {
      const resolved = resolve(target, fn, state, functionNamed);
      if (typeof resolved === "string") {
        unchecked(`${call.module}: cannot resolve its ${target.kind} target: ${resolved}`);
        continue;
      }
      for (const r of resolved)
        for (const p of call.permissions) {
          const resource = p.on === "bucket" ? r.bucket : p.on === "object" ? r.object : r.resource;
          if (resource === undefined) {
            unchecked(`${call.operation} needs an S3 ${p.on}, and ${call.module}'s target is not a bucket`);
            continue;
          }
          needs.push({ action: p.action, resource, why: `${call.operation} from ${call.module}` });
        }
    }
  return needs;
}

/**
 * Findings for one deployed function: `name` is its name in dist/ and in code-targets.ts, `deployed` the
 * deployed function's name (`<prefix>-<name>`).
 */
export function functionPermissionFindings(
  name: string,
  fn: DeployedFunction,
  calls: BundleCalls,
  state: DeployedState,
  functionNamed: (key: string) => DeployedFunction | undefined,
): PermissionFinding[] {
  const findings: PermissionFinding[] = [];
  const add = (kind: FindingKind, message: string) => findings.push({ function: name, kind, message });
  for (const attached of fn.attachedPolicies)
    add(
      FindingKind.Unchecked,
      `its role has the managed policy ${attached} attached, which the check cannot read`,
    );

  const needs = [
    ...codeNeeds(name, fn, calls, state, functionNamed, (m) => add(FindingKind.Unchecked, m)),
    ...lambdaNeeds(fn),
  ];
  const documents: PolicyDocument[] = [...fn.policies.values()];

  const seen = new Set<string>();
  for (const need of needs) {
    const key = `${need.action} ${need.resource}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (decide(documents, { action: need.action, resource: need.resource }) !== "allowed")
      add(FindingKind.Missing, `${need.action} on ${need.resource} is not allowed (${need.why})`);
  }

  for (const [policyName, document] of fn.policies)
    for (const statement of statementsOf(document)) {
      if (statement.Effect !== "Allow") continue;
      const sid = statement.Sid ?? policyName;
      for (const action of list(statement.Action))
        for (const resource of list(statement.Resource)) {
          const used = needs.some(
            (n) => matchesPattern(action, n.action, true) && matchesPattern(resource, n.resource),
          );
          if (!used)
            add(FindingKind.Unused, `${sid} allows ${action} on ${resource}, which nothing calls there`);
        }
    }
  return findings;
}
