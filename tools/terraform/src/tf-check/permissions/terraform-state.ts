/**
 * `terraform show -json` of an applied root, read for the checks of what was deployed: every resource of
 * every module, and the lookups the checks need (a function's role policies, its mappings, the resource a
 * name or a queue URL stands for). Values are the state's: the policy documents as Terraform rendered them
 * and AWS (here moto) holds them.
 */
import type { PolicyDocument } from "./policy.ts";

export interface StateResource {
  readonly address: string;
  readonly mode: "managed" | "data";
  readonly type: string;
  readonly values: Readonly<Record<string, unknown>>;
}

interface StateModule {
  readonly resources?: readonly StateResource[];
  readonly child_modules?: readonly StateModule[];
}

/** The JSON `terraform show -json` prints for a root with state. */
export interface TerraformShow {
  readonly values?: { readonly root_module?: StateModule };
}

export class StateError extends Error {
  override readonly name = "StateError";
}

const text = (value: unknown): string => (typeof value === "string" ? value : "");
const first = (value: unknown): Readonly<Record<string, unknown>> | undefined =>
  Array.isArray(value) ? (value[0] as Readonly<Record<string, unknown>> | undefined) : undefined;

/** A deployed function, with what Lambda does for it and the policies its role holds. */
export interface DeployedFunction {
  readonly name: string;
  readonly arn: string;
  readonly roleArn: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly logGroupArn: string | undefined;
  readonly tracing: boolean;
  /** Its event source mappings: the source (a queue, stream or stream consumer) and the on-failure destination. */
  readonly mappings: readonly { readonly source: string; readonly onFailure: string | undefined }[];
  /** The role's inline policies, by name. */
  readonly policies: ReadonlyMap<string, PolicyDocument>;
  /** Managed policies attached to the role: not read by the checks, so each is a finding. */
  readonly attachedPolicies: readonly string[];
}

export class DeployedState {
  readonly resources: readonly StateResource[];

  constructor(show: TerraformShow) {
    const out: StateResource[] = [];
    const walk = (module: StateModule | undefined) => {
      for (const r of module?.resources ?? []) out.push(r);
      for (const child of module?.child_modules ?? []) walk(child);
    };
    walk(show.values?.root_module);
    if (out.length === 0) throw new StateError("the state holds no resources: was the root applied?");
    this.resources = out;
  }

  ofType(type: string): readonly StateResource[] {
    return this.resources.filter((r) => r.mode === "managed" && r.type === type);
  }

  /** The ARN of the resource of `type` whose `field` is `value` (a table's name, a queue's URL...). */
  arnOf(type: string, field: string, value: string): string | undefined {
    return text(this.ofType(type).find((r) => text(r.values[field]) === value)?.values.arn) || undefined;
  }

  queueArnByUrl(url: string): string | undefined {
    return this.arnOf("aws_sqs_queue", "url", url) ?? this.arnOf("aws_sqs_queue", "id", url);
  }

  /** The DLQ a source queue's redrive policy names. */
  deadLetterQueueOf(queueArn: string): string | undefined {
    const queue = this.ofType("aws_sqs_queue").find((r) => text(r.values.arn) === queueArn);
    const url = text(queue?.values.url) || text(queue?.values.id);
    const policy =
      this.ofType("aws_sqs_queue_redrive_policy").find((r) => text(r.values.queue_url) === url)?.values
        .redrive_policy ?? queue?.values.redrive_policy;
    if (!text(policy)) return undefined;
    return (
      text((JSON.parse(text(policy)) as { deadLetterTargetArn?: unknown }).deadLetterTargetArn) || undefined
    );
  }

  functions(): DeployedFunction[] {
    return this.ofType("aws_lambda_function").map((fn) => {
      const v = fn.values;
      const name = text(v.function_name);
      const arn = text(v.arn);
      const roleArn = text(v.role);
      const roleName = roleArn.slice(roleArn.lastIndexOf("/") + 1);
      const logGroup = text(first(v.logging_config)?.log_group) || `/aws/lambda/${name}`;
      const policies = new Map<string, PolicyDocument>();
      for (const p of this.ofType("aws_iam_role_policy"))
        if (text(p.values.role) === roleName)
          policies.set(text(p.values.name), JSON.parse(text(p.values.policy)) as PolicyDocument);
      return {
        name,
        arn,
        roleArn,
        environment: (first(v.environment)?.variables ?? {}) as Record<string, string>,
        logGroupArn: this.arnOf("aws_cloudwatch_log_group", "name", logGroup),
        tracing: text(first(v.tracing_config)?.mode) === "Active",
        mappings: this.ofType("aws_lambda_event_source_mapping")
          .filter((m) => text(m.values.function_name) === arn || text(m.values.function_name) === name)
          .map((m) => ({
            source: text(m.values.event_source_arn),
            onFailure:
              text(first(first(m.values.destination_config)?.on_failure)?.destination_arn) || undefined,
          })),
        policies,
        attachedPolicies: this.ofType("aws_iam_role_policy_attachment")
          .filter((a) => text(a.values.role) === roleName)
          .map((a) => text(a.values.policy_arn)),
      };
    });
  }
}
