/**
 * The questions a cautious platform team asks of the bootstrap and the environments (docs/security.md),
 * put to the policies the roots render, with IAM's evaluation (policy-eval.ts). Every "must not" has a
 * "must" beside it (a positive control), so that a role that can do nothing does not pass.
 *
 * The attacker the checks assume holds one environment's deploy or plan role (or writes a workflow that
 * asks for one) and chooses every condition value a caller can choose: the tags of its request, the
 * permissions boundary it names, the service it passes a role to; a resource's tags are taken to be
 * whatever it could have set on it (a re-tagged key says environment=<its own>).
 */
import type { Inventory, RedriveAllow, Role } from "./inventory.ts";
import {
  type ContextValue,
  type Decision,
  decide,
  identityDecision,
  kmsDecision,
  type PolicyDocument,
  statements,
} from "./policy-eval.ts";

export interface CheckInput {
  readonly bootstrap: Inventory;
  /** The environments' roots by name (dev, prod), each applied in the same account as bootstrap. */
  readonly environments: Readonly<Record<string, Inventory>>;
  /** owner/name, as bootstrap's github_repository. */
  readonly repository: string;
  readonly deployBranch: string;
  /**
   * The repository's OIDC subject template the roots declare (bootstrap's output
   * github_oidc_subject_claim_keys); GitHub's default, repo and context, where they declare none.
   */
  readonly subjectClaimKeys?: readonly string[];
}

/** GitHub's subject template when a repository sets none. */
export const DEFAULT_SUBJECT_CLAIM_KEYS = ["repo", "context"] as const;

/** The claims of a GitHub Actions job that a subject template can include. */
export interface JobClaims {
  readonly repo: string;
  /** environment:<name>, ref:<ref> (a job without environment), or pull_request. */
  readonly context: string;
  /** The ref of the run (the caller's, for a reusable workflow): refs/heads/<branch>, refs/pull/<n>/merge. */
  readonly ref: string;
  /** <owner>/<repo>/<path of the workflow file the job is in>@<ref of that file>. */
  readonly job_workflow_ref: string;
}

/**
 * The `sub` GitHub puts in a job's token under a subject template (GitHub Docs, "OpenID Connect":
 * customizing the subject claims): each key as `key:value` in the template's order, but `context` as its
 * value alone.
 */
export function githubSubject(keys: readonly string[], claims: JobClaims): string {
  return keys
    .map((key) => {
      const value = (claims as unknown as Record<string, string | undefined>)[key];
      if (value === undefined) throw new Error(`no claim ${key} in the job's claims`);
      return key === "context" ? value : `${key}:${value}`;
    })
    .join(":");
}

export interface Finding {
  /** The check's id (docs/security.md lists them) and the issue item it guards. */
  readonly check: string;
  readonly message: string;
}

export interface CheckReport {
  readonly findings: readonly Finding[];
  /** How many requests were evaluated. */
  readonly evaluated: number;
}

/** Reads of records, messages, items, objects and logs: what no plan role may do anywhere. */
export const DATA_READS = [
  "s3:GetObject",
  "s3:GetObjectVersion",
  "dynamodb:GetItem",
  "dynamodb:BatchGetItem",
  "dynamodb:Query",
  "dynamodb:Scan",
  "dynamodb:PartiQLSelect",
  "dynamodb:ExportTableToPointInTime",
  "dynamodb:GetRecords",
  "kinesis:GetRecords",
  "kinesis:GetShardIterator",
  "kinesis:SubscribeToShard",
  "sqs:ReceiveMessage",
  "logs:GetLogEvents",
  "logs:FilterLogEvents",
  "logs:StartQuery",
  "lambda:InvokeFunction",
  "kms:Decrypt",
] as const;

/** IAM calls that change a role, a policy or who can use them. */
export const IAM_WRITES = [
  "iam:CreateRole",
  "iam:DeleteRole",
  "iam:UpdateRole",
  "iam:UpdateAssumeRolePolicy",
  "iam:PutRolePolicy",
  "iam:DeleteRolePolicy",
  "iam:AttachRolePolicy",
  "iam:DetachRolePolicy",
  "iam:PutRolePermissionsBoundary",
  "iam:DeleteRolePermissionsBoundary",
  "iam:TagRole",
  "iam:UntagRole",
  "iam:PassRole",
  "iam:CreatePolicyVersion",
  "iam:SetDefaultPolicyVersion",
  "iam:DeletePolicy",
  "iam:DeletePolicyVersion",
  "iam:UpdateOpenIDConnectProviderThumbprint",
  "iam:AddClientIDToOpenIDConnectProvider",
  "iam:DeleteOpenIDConnectProvider",
] as const;

/** IAM calls that create principals, identity providers or policies of the account. */
export const ACCOUNT_IAM = [
  "iam:CreateOpenIDConnectProvider",
  "iam:CreateSAMLProvider",
  "iam:CreateUser",
  "iam:CreateAccessKey",
  "iam:CreateLoginProfile",
  "iam:CreatePolicy",
  "iam:CreateServiceLinkedRole",
  "iam:CreateInstanceProfile",
  "iam:AddRoleToInstanceProfile",
  "iam:UpdateAccountPasswordPolicy",
  "sts:AssumeRole",
] as const;

/** A resource of the account each of ACCOUNT_IAM could name. */
const ACCOUNT_IAM_RESOURCE: Readonly<Record<string, string>> = {
  "iam:CreateOpenIDConnectProvider": "oidc-provider/token.actions.githubusercontent.com",
  "iam:CreateSAMLProvider": "saml-provider/probe",
  "iam:CreateUser": "user/probe",
  "iam:CreateAccessKey": "user/probe",
  "iam:CreateLoginProfile": "user/probe",
  "iam:CreatePolicy": "policy/probe",
  "iam:CreateServiceLinkedRole": "role/aws-service-role/lambda.amazonaws.com/probe",
  "iam:CreateInstanceProfile": "instance-profile/probe",
  "iam:AddRoleToInstanceProfile": "instance-profile/probe",
  "sts:AssumeRole": "role/mcp-prod-deploy",
};

/** What a holder of a key's administration could do to take it over or destroy it. */
export const KEY_TAKEOVER = [
  "kms:TagResource",
  "kms:UntagResource",
  "kms:PutKeyPolicy",
  "kms:ScheduleKeyDeletion",
  "kms:DisableKey",
  "kms:CreateGrant",
  "kms:CreateAlias",
  "kms:UpdateAlias",
  "kms:DeleteAlias",
] as const;

const OIDC_SUB = "token.actions.githubusercontent.com:sub";
const OIDC_AUD = "token.actions.githubusercontent.com:aud";

const accountOf = (arn: string) => arn.split(":")[4] ?? "";
const RESOURCE_ACCOUNT = "aws:ResourceAccount";
/** An account that is not the roots': the owner of a bucket registered under one of their bucket names. */
const ANOTHER_ACCOUNT = "999999999999";
const prefixOf = (env: string) => `mcp-${env}`;

/** Every Allow action named by a principal's policies (for "whatever it may do"). */
function allowedActions(docs: readonly PolicyDocument[]): string[] {
  const actions = new Set<string>();
  for (const d of docs)
    for (const s of statements(d))
      if (s.Effect === "Allow") for (const a of [s.Action ?? []].flat()) actions.add(a);
  return [...actions];
}

/**
 * The Allow actions of statements that name resources (not "*"): what a principal may do to a resource
 * it can name. Actions allowed only on "*" are those AWS authorises without a resource (CreateKey,
 * GetCallerIdentity, List calls): they reach no other environment's resource.
 */
function scopedActions(docs: readonly PolicyDocument[]): string[] {
  const actions = new Set<string>();
  for (const d of docs)
    for (const s of statements(d))
      if (s.Effect === "Allow" && [s.Resource ?? []].flat().some((r) => r !== "*"))
        for (const a of [s.Action ?? []].flat()) actions.add(a);
  return [...actions];
}

/** The service of an ARN (arn:aws:<service>:...), to pair it with that service's actions only. */
const serviceOf = (arn: string) => arn.split(":")[2] ?? "";

class Checker {
  readonly findings: Finding[] = [];
  evaluated = 0;

  constructor(private readonly input: CheckInput) {}

  fail(check: string, message: string): void {
    this.findings.push({ check, message });
  }

  role(name: string): Role | undefined {
    return this.input.bootstrap.roles.find((r) => r.name === name);
  }

  /** The role's own policies: inline and the customer-managed ones this root created. */
  policies(role: Role, check: string): PolicyDocument[] {
    const docs: PolicyDocument[] = role.inline.map((p) => p.document);
    for (const arn of role.attached) {
      const doc = this.input.bootstrap.managedPolicies.get(arn);
      if (doc === undefined)
        this.fail(
          check,
          `${role.name}: attaches ${arn}, a policy no root here renders (AWS-managed): what it grants is not reviewed`,
        );
      else docs.push(doc);
    }
    return docs;
  }

  boundaryArn(env: string): string {
    const account = accountOf(this.input.bootstrap.roles[0]?.arn ?? "");
    return `arn:aws:iam::${account}:policy/${prefixOf(env)}-function-boundary`;
  }

  /**
   * IAM's decision on one request. `aws:ResourceAccount` is the resource's account, as AWS sets it: the
   * account in its ARN, or, for an ARN without one (S3's), the account the roots are applied in; a
   * request about another account's resource of the same name says so in `context`.
   */
  ask(
    docs: readonly PolicyDocument[],
    action: string,
    resource: string,
    context: Record<string, ContextValue> = {},
    boundary?: readonly PolicyDocument[],
  ): Decision {
    this.evaluated += 1;
    const resourceAccount = /^\d{12}$/.test(accountOf(resource))
      ? accountOf(resource)
      : accountOf(this.input.bootstrap.roles[0]?.arn ?? "");
    return identityDecision(
      docs,
      { action, resource, context: { [RESOURCE_ACCOUNT]: resourceAccount, ...context } },
      boundary,
    );
  }
}

function environmentResources(env: Inventory): string[] {
  const objects = env.arns.filter((a) => a.startsWith("arn:aws:s3:::")).map((a) => `${a}/kinesis/probe.json`);
  const logStreams = env.arns
    .filter((a) => a.includes(":log-group:"))
    .map((a) => `${a.replace(/:\*$/, "")}:*`);
  return [...env.arns, ...objects, ...logStreams];
}

const isTopic = (arn: string) => /^arn:aws:sns:[^:]+:\d{12}:[^:]+$/.test(arn);

/** Names an environment's role could give resources of its own: an alarm and a queue (in other's region). */
function ownProbe(input: CheckInput, env: string, other: Inventory): { alarm: string; queue: string } {
  const account = accountOf(input.bootstrap.roles[0]?.arn ?? "");
  const region = other.arns.map((a) => a.split(":")[3] ?? "").find((r) => r !== "") ?? "eu-west-1";
  return {
    alarm: `arn:aws:cloudwatch:${region}:${account}:alarm:${prefixOf(env)}-probe`,
    queue: `arn:aws:sqs:${region}:${account}:${prefixOf(env)}-probe`,
  };
}

/** Whether a key's policy lets CloudWatch use it to publish an alarm's notification to the key's topic. */
function cloudWatchMayEncrypt(
  keyPolicy: PolicyDocument,
  key: string,
  account: string,
  alarm: string,
): Decision {
  return cloudWatchMay(keyPolicy, "kms:GenerateDataKey", key, account, alarm);
}

/** What a resource's policy answers CloudWatch acting for `alarm` (publish to a topic, use a key). */
function cloudWatchMay(
  policy: PolicyDocument,
  action: string,
  resource: string,
  account: string,
  alarm: string,
): Decision {
  return decide([policy], {
    action,
    resource,
    principal: { kind: "Service", name: "cloudwatch.amazonaws.com" },
    context: { "aws:SourceAccount": account, "aws:SourceArn": alarm },
  });
}

/**
 * The topic policies a root renders (aws_sns_topic_policy). SNS's default policy, which a topic without
 * one holds, is resource-exposure's finding; CloudWatch's way through it ("AWS": "*" for the account) is
 * not one this evaluator reads, so it is not asked here.
 */
const topicPolicies = (inv: Inventory) =>
  inv.resourcePolicies.filter((p) => p.kind === "topic" && /(^|\.)aws_sns_topic_policy\./.test(p.address));

/** Item 1: the deploy role cannot make itself (or anything of bootstrap) more powerful, nor its roles. */
function deployRoleStaysInItsLane(c: Checker, input: CheckInput, env: string): void {
  const check = "deploy-role-iam";
  const deploy = c.role(`${prefixOf(env)}-deploy`);
  if (deploy === undefined) {
    c.fail(check, `${prefixOf(env)}-deploy: no such role in bootstrap`);
    return;
  }
  const docs = c.policies(deploy, check);
  const boundary = c.boundaryArn(env);
  if (!input.bootstrap.managedPolicies.has(boundary))
    c.fail(check, `${env}: bootstrap creates no permissions boundary ${boundary} for the functions' roles`);
  const account = accountOf(deploy.arn);
  const lane: DeployLane = {
    c,
    docs,
    name: deploy.name,
    adversarial: { "iam:PermissionsBoundary": boundary, "iam:PassedToService": "lambda.amazonaws.com" },
    account,
    functionRole: `arn:aws:iam::${account}:role/${prefixOf(env)}/${prefixOf(env)}-probe`,
  };
  bootstrapIamUntouched(lane, input);
  functionRolesHeld(lane, env);
  ownDeploysStillWork(lane, input, env);
  for (const action of ["iam:DeleteRolePermissionsBoundary", "iam:UpdateAssumeRolePolicy"])
    if (c.ask(docs, action, lane.functionRole, lane.adversarial) === "allowed")
      c.fail(check, `${deploy.name} may ${action} on its functions' roles`);
  accountIamRefused(lane);
}

/** What every question about one environment's deploy role asks with. */
interface DeployLane {
  readonly c: Checker;
  /** The deploy role's own policies. */
  readonly docs: readonly PolicyDocument[];
  readonly name: string;
  /** A request as the role would make it at its best: with its boundary, passing to Lambda. */
  readonly adversarial: Record<string, string>;
  readonly account: string;
  /** A role of the environment's functions: in its path, as the role may create them. */
  readonly functionRole: string;
}

/** No IAM write on any principal or policy bootstrap creates (its own role included). */
function bootstrapIamUntouched({ c, docs, name, adversarial }: DeployLane, input: CheckInput): void {
  const bootstrapIam = [
    ...input.bootstrap.roles.map((r) => r.arn),
    ...input.bootstrap.managedPolicies.keys(),
    ...input.bootstrap.arns.filter((a) => a.includes(":oidc-provider/")),
  ];
  for (const target of bootstrapIam)
    for (const action of IAM_WRITES)
      if (c.ask(docs, action, target, adversarial) === "allowed")
        c.fail("deploy-role-iam", `${name} may ${action} on ${target}`);
}

/** Roles it creates or changes: only in its path, only with its boundary; passed to Lambda only. */
function functionRolesHeld(
  { c, docs, name, adversarial, account, functionRole }: DeployLane,
  env: string,
): void {
  const check = "deploy-role-iam";
  const outsidePath = `arn:aws:iam::${account}:role/${prefixOf(env)}-probe`;
  for (const action of ["iam:CreateRole", "iam:PutRolePolicy", "iam:AttachRolePolicy"]) {
    for (const [what, context] of [
      ["without a permissions boundary", {}],
      ["with another boundary", { "iam:PermissionsBoundary": "arn:aws:iam::aws:policy/AdministratorAccess" }],
    ] as const)
      if (c.ask(docs, action, functionRole, context) === "allowed")
        c.fail(check, `${name} may ${action} ${what} on ${functionRole}`);
    if (c.ask(docs, action, outsidePath, adversarial) === "allowed")
      c.fail(check, `${name} may ${action} on ${outsidePath}, outside its path /${prefixOf(env)}/`);
  }
  for (const action of ["iam:CreateRole", "iam:PutRolePolicy"])
    if (c.ask(docs, action, functionRole, adversarial) !== "allowed")
      c.fail(check, `positive control: ${name} can no longer ${action} a function role with its boundary`);
  for (const service of [
    "ec2.amazonaws.com",
    "ecs-tasks.amazonaws.com",
    "glue.amazonaws.com",
    "cloudformation.amazonaws.com",
  ])
    if (c.ask(docs, "iam:PassRole", functionRole, { "iam:PassedToService": service }) === "allowed")
      c.fail(check, `${name} may pass ${functionRole} to ${service}`);
  if (c.ask(docs, "iam:PassRole", functionRole, adversarial) !== "allowed")
    c.fail(check, `positive control: ${name} can no longer pass its functions' roles to Lambda`);
}

/** Positive controls: it still deploys its own functions and writes its own state. */
function ownDeploysStillWork({ c, docs, name }: DeployLane, input: CheckInput, env: string): void {
  const check = "deploy-role-iam";
  const ownFunction = input.environments[env]?.arns.find((a) => a.includes(":function:"));
  if (ownFunction !== undefined && c.ask(docs, "lambda:UpdateFunctionCode", ownFunction) !== "allowed")
    c.fail(check, `positive control: ${name} cannot UpdateFunctionCode of its own ${ownFunction}`);
  for (const bucket of input.bootstrap.arns.filter(
    (a) => a.startsWith("arn:aws:s3:::") && !a.includes("/"),
  )) {
    const state = `${bucket}/mcp-event-pipelines/${env}/terraform.tfstate`;
    if (c.ask(docs, "s3:PutObject", state) !== "allowed")
      c.fail(check, `positive control: ${name} cannot write its own state ${state}`);
  }
}

/**
 * Principals and policies of the account that would outlive the environment or reach beyond it: a new
 * identity provider (a door for another repository or IdP), users and their keys, policies it could
 * later attach, instance profiles (a role passed to EC2 without PassRole's service condition).
 */
function accountIamRefused({ c, docs, name, adversarial, account }: DeployLane): void {
  for (const action of ACCOUNT_IAM)
    for (const resource of ["*", `arn:aws:iam::${account}:${ACCOUNT_IAM_RESOURCE[action] ?? "*"}`])
      if (c.ask(docs, action, resource, adversarial) === "allowed")
        c.fail("deploy-role-iam", `${name} may ${action} (${resource})`);
}

const CROSS_ENVIRONMENT = "cross-environment";

/** Items 1 and 4: in one account, no role of one environment reaches another's resources, roles, keys or state. */
function environmentsAreIsolated(c: Checker, input: CheckInput, env: string, other: string): void {
  const target = input.environments[other];
  if (target === undefined) return;
  for (const kind of ["deploy", "plan"]) {
    const role = c.role(`${prefixOf(env)}-${kind}`);
    if (role === undefined) continue;
    const crossing = new Crossing(c, input, { env, other, target }, role);
    crossing.resourcesOutOfReach();
    crossing.ordersOutOfReach();
    crossing.keysOutOfReach();
  }
  cloudWatchPublishesForItsOwn(c, input, { env, other, target });
}

/** Two environments of one account: `env`'s roles are asked about `other`'s resources (`target`). */
interface EnvironmentPair {
  readonly env: string;
  readonly other: string;
  readonly target: Inventory;
}

/** One role of `env` against `other`'s resources, with every condition value its caller could choose. */
class Crossing {
  readonly #c: Checker;
  readonly #input: CheckInput;
  readonly #pair: EnvironmentPair;
  readonly #role: Role;
  readonly #docs: PolicyDocument[];
  readonly #otherFunction: string;
  /** Tags its request and a re-tagged resource say environment=env; the boundary and service are env's. */
  readonly #context: Record<string, ContextValue>;

  constructor(c: Checker, input: CheckInput, pair: EnvironmentPair, role: Role) {
    this.#c = c;
    this.#input = input;
    this.#pair = pair;
    this.#role = role;
    this.#docs = c.policies(role, CROSS_ENVIRONMENT);
    this.#otherFunction = pair.target.arns.find((a) => a.includes(":function:")) ?? "";
    this.#context = {
      "aws:ResourceTag/environment": pair.env,
      "aws:RequestTag/environment": pair.env,
      "aws:TagKeys": ["environment"],
      "iam:PermissionsBoundary": c.boundaryArn(pair.env),
      "iam:PassedToService": "lambda.amazonaws.com",
      "lambda:FunctionArn": this.#otherFunction,
    };
  }

  /** Other's resources, roles and Terraform state, each asked with the actions of its service; its function's mappings. */
  resourcesOutOfReach(): void {
    const { other, target } = this.#pair;
    const actions = scopedActions(this.#docs);
    const state = this.#input.bootstrap.arns
      .filter((a) => a.startsWith("arn:aws:s3:::") && !a.includes("/"))
      .map((bucket) => `${bucket}/mcp-event-pipelines/${other}/terraform.tfstate`);
    const resources = [...environmentResources(target), ...state, ...target.roles.map((r) => r.arn)];
    for (const resource of resources)
      for (const action of actions.filter((a) => a.split(":")[0]?.toLowerCase() === serviceOf(resource)))
        if (this.#c.ask(this.#docs, action, resource, this.#context) === "allowed")
          this.#c.fail(CROSS_ENVIRONMENT, `${this.#role.name} may ${action} on ${other}'s ${resource}`);
    if (this.#c.ask(this.#docs, "lambda:CreateEventSourceMapping", "*", this.#context) === "allowed")
      this.#c.fail(
        CROSS_ENVIRONMENT,
        `${this.#role.name} may map an event source onto ${other}'s function ${this.#otherFunction}`,
      );
  }

  /**
   * Resources that take orders from another resource, not from the caller's IAM: an alarm's actions
   * (CloudWatch publishes, the topic's key decides) and a queue's dead-letter target (the DLQ's
   * redrive allow policy decides). What the role can write on its own resources must not reach other's.
   */
  ordersOutOfReach(): void {
    const { env, other, target } = this.#pair;
    const own = ownProbe(this.#input, env, target);
    for (const topic of target.arns.filter(isTopic))
      if (
        this.#c.ask(this.#docs, "cloudwatch:PutMetricAlarm", own.alarm, {
          "cloudwatch:AlarmActions": [topic],
        }) === "allowed"
      )
        this.#c.fail(
          CROSS_ENVIRONMENT,
          `${this.#role.name} may point an alarm at ${other}'s topic ${topic} (cloudwatch:AlarmActions)`,
        );
    const canSetRedrive = ["sqs:SetQueueAttributes", "sqs:CreateQueue"].some(
      (action) => this.#c.ask(this.#docs, action, own.queue) === "allowed",
    );
    if (!canSetRedrive) return;
    for (const queue of target.queues ?? []) {
      const outsiders = redriveOutsiders(queue.redriveAllow, target);
      if (outsiders.length > 0)
        this.#c.fail(
          CROSS_ENVIRONMENT,
          `${this.#role.name} may send its queues' dead letters into ${other}'s ${queue.arn} (a RedrivePolicy naming it; its redrive allow policy admits ${outsiders.join(", ")})`,
        );
    }
  }

  /** Keys: the key policy decides, with IAM only where it delegates to the account. */
  keysOutOfReach(): void {
    const { env, other, target } = this.#pair;
    const role = this.#role;
    const principal = { kind: "AWS" as const, arn: role.arn, account: accountOf(role.arn) };
    for (const key of target.resourcePolicies.filter((p) => p.kind === "key"))
      for (const action of KEY_TAKEOVER) {
        this.#c.evaluated += 1;
        if (
          kmsDecision(key.document, principal, this.#docs, {
            action,
            resource: key.resource,
            context: this.#context,
          }) === "allowed"
        )
          this.#c.fail(
            CROSS_ENVIRONMENT,
            `${role.name} may ${action} on ${other}'s key ${key.resource} (re-tagged environment=${env})`,
          );
      }
  }
}

/** The queues outside `target` that a DLQ's redrive allow policy admits as sources. */
function redriveOutsiders(allow: RedriveAllow, target: Inventory): string[] {
  if (allow.permission === "allowAll") return ["any queue of the account"];
  if (allow.permission === "byQueue") return allow.sources.filter((s) => !target.arns.includes(s));
  return [];
}

/** The key of other's alarm topic, and the topic's policy, asked by CloudWatch for an alarm of env: refused. */
function cloudWatchPublishesForItsOwn(c: Checker, input: CheckInput, pair: EnvironmentPair): void {
  const { env, other, target } = pair;
  const account = accountOf(input.bootstrap.roles[0]?.arn ?? "");
  const alarm = ownProbe(input, env, target).alarm;
  for (const key of target.resourcePolicies.filter((p) => p.kind === "key")) {
    c.evaluated += 1;
    if (cloudWatchMayEncrypt(key.document, key.resource, account, alarm) === "allowed")
      c.fail(
        CROSS_ENVIRONMENT,
        `${other}'s key ${key.resource} lets CloudWatch publish for ${env}'s alarm ${alarm}`,
      );
  }
  for (const topic of topicPolicies(target)) {
    c.evaluated += 1;
    if (cloudWatchMay(topic.document, "sns:Publish", topic.resource, account, alarm) === "allowed")
      c.fail(
        CROSS_ENVIRONMENT,
        `${other}'s topic ${topic.resource} lets CloudWatch publish for ${env}'s alarm ${alarm}`,
      );
  }
}

/** Item 4: no key of the account, whoever created it, can be taken over by re-tagging it. */
function noKeyTakeoverByTag(c: Checker, env: string): void {
  const check = "kms-by-tag";
  const deploy = c.role(`${prefixOf(env)}-deploy`);
  if (deploy === undefined) return;
  const docs = c.policies(deploy, check);
  const account = accountOf(deploy.arn);
  // A key someone else created, whose policy (like most) lets the account's IAM policies decide.
  const foreignKey = `arn:aws:kms:eu-west-1:${account}:key/00000000-0000-0000-0000-00000000f0re`;
  const delegating: PolicyDocument = {
    Statement: [
      { Effect: "Allow", Principal: { AWS: `arn:aws:iam::${account}:root` }, Action: "kms:*", Resource: "*" },
    ],
  };
  const principal = { kind: "AWS" as const, arn: deploy.arn, account };
  for (const tags of [{}, { "aws:ResourceTag/environment": env }])
    for (const action of KEY_TAKEOVER) {
      c.evaluated += 1;
      const context = { ...tags, "aws:RequestTag/environment": env, "aws:TagKeys": ["environment"] };
      if (kmsDecision(delegating, principal, docs, { action, resource: foreignKey, context }) === "allowed")
        c.fail(
          check,
          `${deploy.name} may ${action} on a key it did not create${"aws:ResourceTag/environment" in tags ? ` once tagged environment=${env}` : ""}`,
        );
    }
}

/** Item 4, positive control: the deploy role still administers its own alarm key, the plan role reads it. */
function ownKeyStillManaged(c: Checker, input: CheckInput, env: string): void {
  const check = "kms-by-tag";
  const target = input.environments[env];
  if (target === undefined) return;
  for (const [kind, action] of [
    ["deploy", "kms:PutKeyPolicy"],
    ["plan", "kms:GetKeyPolicy"],
  ] as const) {
    const role = c.role(`${prefixOf(env)}-${kind}`);
    if (role === undefined) continue;
    const principal = { kind: "AWS" as const, arn: role.arn, account: accountOf(role.arn) };
    for (const key of target.resourcePolicies.filter((p) => p.kind === "key")) {
      c.evaluated += 1;
      if (
        kmsDecision(key.document, principal, c.policies(role, check), { action, resource: key.resource }) !==
        "allowed"
      )
        c.fail(
          check,
          `positive control: ${role.name} cannot ${action} on its own environment's key ${key.resource}`,
        );
    }
  }
}

/**
 * Positive controls of the cross-environment alarm checks: the deploy role still points its alarms at its
 * own topic, and its topic's key still lets CloudWatch publish for its own alarms.
 */
function ownAlarmsStillPublish(c: Checker, input: CheckInput, env: string): void {
  const check = "cross-environment";
  const target = input.environments[env];
  const deploy = c.role(`${prefixOf(env)}-deploy`);
  if (target === undefined || deploy === undefined) return;
  const alarm = target.arns.find((a) => a.includes(":alarm:"));
  const docs = c.policies(deploy, check);
  for (const topic of target.arns.filter(isTopic))
    if (
      alarm !== undefined &&
      c.ask(docs, "cloudwatch:PutMetricAlarm", alarm, { "cloudwatch:AlarmActions": [topic] }) !== "allowed"
    )
      c.fail(check, `positive control: ${deploy.name} cannot point its alarm ${alarm} at its topic ${topic}`);
  for (const key of target.resourcePolicies.filter((p) => p.kind === "key")) {
    c.evaluated += 1;
    if (
      alarm !== undefined &&
      cloudWatchMayEncrypt(key.document, key.resource, accountOf(deploy.arn), alarm) !== "allowed"
    )
      c.fail(
        check,
        `positive control: ${env}'s key ${key.resource} refuses CloudWatch for its own alarm ${alarm}`,
      );
  }
  for (const topic of topicPolicies(target)) {
    c.evaluated += 1;
    if (
      alarm !== undefined &&
      cloudWatchMay(topic.document, "sns:Publish", topic.resource, accountOf(deploy.arn), alarm) !== "allowed"
    )
      c.fail(
        check,
        `positive control: ${env}'s topic ${topic.resource} refuses CloudWatch for its own alarm ${alarm}`,
      );
  }
}

/** Item 3: plan roles read configuration and their own state, never data, never another state. */
function planRolesReadNoData(c: Checker, input: CheckInput, env: string): void {
  const check = "plan-role-reads";
  const plan = c.role(`${prefixOf(env)}-plan`);
  if (plan === undefined) {
    c.fail(check, `${prefixOf(env)}-plan: no such role in bootstrap`);
    return;
  }
  const docs = c.policies(plan, check);
  const resources = Object.values(input.environments).flatMap(environmentResources);
  for (const resource of resources)
    for (const action of DATA_READS)
      if (c.ask(docs, action, resource) === "allowed")
        c.fail(check, `${plan.name} may ${action} on ${resource}`);
  for (const action of allowedActions(docs)) {
    const verb = action.split(":")[1] ?? "";
    if (!/^(Get|List|Describe)/.test(verb)) c.fail(check, `${plan.name} is allowed ${action}, not a read`);
  }
  const buckets = input.bootstrap.arns.filter((a) => a.startsWith("arn:aws:s3:::") && !a.includes("/"));
  for (const bucket of buckets)
    for (const other of Object.keys(input.environments)) {
      const key = `${bucket}/mcp-event-pipelines/${other}/terraform.tfstate`;
      const decision = c.ask(docs, "s3:GetObject", key);
      if (other === env && decision !== "allowed")
        c.fail(check, `positive control: ${plan.name} cannot read its own state ${key}`);
      if (other !== env && decision === "allowed")
        c.fail(check, `${plan.name} may read ${other}'s state ${key}`);
      for (const write of ["s3:PutObject", "s3:DeleteObject"])
        if (c.ask(docs, write, `${key}.tflock`) === "allowed")
          c.fail(check, `${plan.name} may ${write} ${key}.tflock`);
    }
  const target = input.environments[env];
  const table = target?.arns.find((a) => a.includes(":table/"));
  if (table !== undefined && c.ask(docs, "dynamodb:DescribeTable", table) !== "allowed")
    c.fail(check, `positive control: ${plan.name} cannot DescribeTable ${table}, which refresh reads`);
}

interface Scenario {
  readonly what: string;
  readonly claims: JobClaims;
}

/** A role and the jobs GitHub may give it (allowed) or must not (denied). */
interface TrustCase {
  readonly role: string;
  readonly allowed: Scenario[];
  readonly denied: Scenario[];
}

/**
 * The jobs the scenarios are made of: the repository's workflow files at a ref, a pull request's merge
 * ref, the deploy branch, the environment's context.
 */
class GithubJobs {
  readonly main: string;
  readonly pr = "refs/pull/7/merge";
  readonly inEnv: string;

  constructor(
    readonly repo: string,
    deployBranch: string,
    env: string,
  ) {
    this.main = `refs/heads/${deployBranch}`;
    this.inEnv = `environment:${env}`;
  }

  file(name: string, ref: string): string {
    return `${this.repo}/.github/workflows/${name}@${ref}`;
  }

  job(context: string, ref: string, workflow: string): JobClaims {
    return { repo: this.repo, context, ref, job_workflow_ref: workflow };
  }
}

/** Item 2: who gets which role from GitHub, as GitHub renders each job's subject under the template. */
function trustIsBoundToWorkflowAndBranch(
  c: Checker,
  input: CheckInput,
  env: string,
  planOnPullRequest: boolean,
): void {
  const jobs = new GithubJobs(input.repository, input.deployBranch, env);
  const keys = input.subjectClaimKeys ?? DEFAULT_SUBJECT_CLAIM_KEYS;
  for (const trustCase of [deployRoleCase(jobs, env), planRoleCase(jobs, env, planOnPullRequest)]) {
    const trust = RoleTrust.of(c, trustCase.role, keys, jobs);
    if (trust === undefined) continue;
    trust.allowedGetIn(trustCase.allowed);
    trust.deniedStayOut(trustCase.denied, trustCase.allowed);
    trust.defaultSubjectGetsNothing();
    trust.otherAudienceRefused(trustCase.allowed);
  }
}

/** The deploy role: apply.yml on the deploy branch in the environment, and no job that can pass for it. */
function deployRoleCase(jobs: GithubJobs, env: string): TrustCase {
  const { repo, main, pr, inEnv } = jobs;
  return {
    role: `${prefixOf(env)}-deploy`,
    allowed: [
      {
        what: "apply.yml on the deploy branch in its environment",
        claims: jobs.job(inEnv, main, jobs.file("apply.yml", main)),
      },
    ],
    denied: [
      {
        what: "a pull request's workflow that adds the environment",
        claims: jobs.job(inEnv, pr, jobs.file("evil.yml", pr)),
      },
      {
        what: "apply.yml dispatched from another branch",
        claims: jobs.job(inEnv, "refs/heads/feature", jobs.file("apply.yml", "refs/heads/feature")),
      },
      {
        // uses: <owner>/<repo>/.github/workflows/apply.yml@main from a workflow of another branch: the
        // job runs main's apply.yml, with that branch's ref, checkout and inputs.
        what: "a workflow of another branch calling apply.yml@main in the environment",
        claims: jobs.job(inEnv, "refs/heads/feature", jobs.file("apply.yml", main)),
      },
      {
        what: "a pull request's workflow calling apply.yml@main in the environment",
        claims: jobs.job(inEnv, pr, jobs.file("apply.yml", main)),
      },
      {
        what: "another workflow on the deploy branch",
        claims: jobs.job(inEnv, main, jobs.file("ci.yml", main)),
      },
      {
        what: "a pull request",
        claims: jobs.job("pull_request", pr, jobs.file("ci.yml", pr)),
      },
      {
        what: "another repository",
        claims: {
          repo: `${repo}-fork`,
          context: inEnv,
          ref: main,
          job_workflow_ref: `${repo}-fork/.github/workflows/apply.yml@${main}`,
        },
      },
    ],
  };
}

/**
 * The plan role: apply.yml's plan job on the deploy branch, and ci.yml on a pull request where the
 * environment plans pull requests (denied where it does not).
 */
function planRoleCase(jobs: GithubJobs, env: string, planOnPullRequest: boolean): TrustCase {
  const { main, pr } = jobs;
  const pullRequest = {
    what: "a pull request",
    claims: jobs.job("pull_request", pr, jobs.file("ci.yml", pr)),
  };
  return {
    role: `${prefixOf(env)}-plan`,
    allowed: [
      {
        what: "apply.yml's plan job on the deploy branch",
        claims: jobs.job(`ref:${main}`, main, jobs.file("apply.yml", main)),
      },
      ...(planOnPullRequest ? [{ ...pullRequest, what: "ci.yml on a pull request" }] : []),
    ],
    denied: [
      ...(planOnPullRequest ? [] : [pullRequest]),
      {
        what: "another branch",
        claims: jobs.job(
          "ref:refs/heads/feature",
          "refs/heads/feature",
          jobs.file("apply.yml", "refs/heads/feature"),
        ),
      },
      {
        what: "a pull request's workflow calling apply.yml@main",
        claims: jobs.job("pull_request", pr, jobs.file("apply.yml", main)),
      },
      {
        what: "a workflow of another branch calling apply.yml@main",
        claims: jobs.job("ref:refs/heads/feature", "refs/heads/feature", jobs.file("apply.yml", main)),
      },
    ],
  };
}

/** One role's trust policy, asked whether a GitHub token with a given subject (and audience) may assume it. */
class RoleTrust {
  private constructor(
    private readonly c: Checker,
    private readonly name: string,
    private readonly role: Role,
    /** The GitHub OIDC provider the trust names: the principal of every question. */
    private readonly federated: string,
    private readonly keys: readonly string[],
    private readonly jobs: GithubJobs,
  ) {}

  /** The role's trust, or undefined (and a finding) where there is no such role or it trusts no OIDC provider. */
  static of(c: Checker, name: string, keys: readonly string[], jobs: GithubJobs): RoleTrust | undefined {
    const check = "github-trust";
    const role = c.role(name);
    if (role === undefined) {
      c.fail(check, `${name}: no such role`);
      return undefined;
    }
    const federated = statements(role.trust)
      .flatMap((s) =>
        s.Principal === "*" || s.Principal === undefined ? [] : [s.Principal.Federated ?? []].flat(),
      )
      .find((p) => p.includes("oidc-provider/"));
    if (federated === undefined) {
      c.fail(check, `${name}: trusts no OIDC provider`);
      return undefined;
    }
    return new RoleTrust(c, name, role, federated, keys, jobs);
  }

  /** The positive control: each job the role is for gets it. */
  allowedGetIn(allowed: readonly Scenario[]): void {
    for (const s of allowed) {
      const sub = githubSubject(this.keys, s.claims);
      if (this.assume(sub) !== "allowed")
        this.c.fail("github-trust", `positive control: ${this.name} refuses ${s.what} (${sub})`);
    }
  }

  /**
   * No denied job gets the role; where the template renders a denied job's subject as an allowed one's,
   * the finding says so (the template, not the trust, is what to change).
   */
  deniedStayOut(denied: readonly Scenario[], allowed: readonly Scenario[]): void {
    const allowedSubs = new Set(allowed.map((s) => githubSubject(this.keys, s.claims)));
    for (const s of denied) {
      const sub = githubSubject(this.keys, s.claims);
      if (this.assume(sub) === "allowed")
        this.c.fail(
          "github-trust",
          `${this.name} trusts ${s.what} (${sub}${allowedSubs.has(sub) ? ": the template gives it the subject of the job the role is for" : ""})`,
        );
    }
  }

  /**
   * Whatever the template: a repository that has not set it (GitHub's default subject, for any job of
   * the environment or any pull request) gets nothing.
   */
  defaultSubjectGetsNothing(): void {
    const { pr, inEnv } = this.jobs;
    for (const [what, context] of [
      ["any workflow naming the environment", inEnv],
      ["a pull request", "pull_request"],
    ] as const) {
      const sub = githubSubject(
        DEFAULT_SUBJECT_CLAIM_KEYS,
        this.jobs.job(context, pr, this.jobs.file("evil.yml", pr)),
      );
      if (this.assume(sub) === "allowed")
        this.c.fail("github-trust", `${this.name} trusts GitHub's default subject (${what}) (${sub})`);
    }
  }

  /** And the audience: a token minted for another audience is refused, with the subject of a job the role is for. */
  otherAudienceRefused(allowed: readonly Scenario[]): void {
    const { main, inEnv } = this.jobs;
    this.c.evaluated += 1;
    const sub = githubSubject(
      this.keys,
      allowed[0]?.claims ?? this.jobs.job(inEnv, main, this.jobs.file("apply.yml", main)),
    );
    if (this.decide("https://github.com/example", sub) === "allowed")
      this.c.fail("github-trust", `${this.name} trusts a token of another audience than sts.amazonaws.com`);
  }

  /** A token for STS (the audience GitHub's action asks for) with this subject: one evaluation counted. */
  private assume(sub: string): Decision {
    this.c.evaluated += 1;
    return this.decide("sts.amazonaws.com", sub);
  }

  private decide(audience: string, sub: string): Decision {
    return decide([this.role.trust], {
      action: "sts:AssumeRoleWithWebIdentity",
      resource: this.role.arn,
      principal: { kind: "Federated", arn: this.federated },
      context: { [OIDC_AUD]: audience, [OIDC_SUB]: sub },
    });
  }
}

/** Item 1: every function role lives in its environment's path with its boundary, and needs nothing beyond it. */
function functionRolesWithinBoundary(c: Checker, input: CheckInput, env: string): void {
  const check = "function-boundary";
  const inv = input.environments[env];
  if (inv === undefined) return;
  const boundaryArn = c.boundaryArn(env);
  const boundary = input.bootstrap.managedPolicies.get(boundaryArn);
  for (const role of inv.roles) {
    if (role.path !== `/${prefixOf(env)}/`)
      c.fail(check, `${role.name}: path ${role.path}, not /${prefixOf(env)}/`);
    if (role.boundary !== boundaryArn)
      c.fail(check, `${role.name}: permissions boundary ${role.boundary ?? "none"}, not ${boundaryArn}`);
    const services = statements(role.trust).flatMap((s) =>
      s.Principal === "*"
        ? ["*"]
        : [s.Principal?.Service ?? [], s.Principal?.AWS ?? [], s.Principal?.Federated ?? []].flat(),
    );
    if (services.join() !== "lambda.amazonaws.com")
      c.fail(check, `${role.name}: trusted by ${services.join(", ")}, not Lambda alone`);
    if (boundary === undefined) continue;
    for (const p of role.inline)
      for (const s of statements(p.document)) {
        if (s.Effect !== "Allow") continue;
        for (const action of [s.Action ?? []].flat())
          for (const resource of [s.Resource ?? []].flat())
            if (c.ask([p.document], action, resource, {}, [boundary]) !== "allowed")
              c.fail(
                check,
                `${role.name}: ${p.name}/${s.Sid ?? ""} grants ${action} on ${resource}, which the boundary denies (AWS would refuse the call)`,
              );
      }
  }
  if (boundary === undefined) return;
  for (const [other, target] of Object.entries(input.environments)) {
    if (other === env) continue;
    for (const resource of environmentResources(target))
      for (const action of scopedActions([boundary]).filter(
        (a) => a.split(":")[0]?.toLowerCase() === serviceOf(resource),
      ))
        if (
          c.ask([boundary], action, resource, { "kms:ViaService": "s3.eu-west-1.amazonaws.com" }) ===
          "allowed"
        )
          c.fail(check, `${env}'s boundary allows ${action} on ${other}'s ${resource}`);
  }
  // S3's ARNs name no account: arn:aws:s3:::<prefix>-* matches a bucket of that name in any account. Once
  // one of the environment's buckets is gone (the results bucket, an environment destroyed), whoever
  // registers its name elsewhere would receive what the functions write, or feed them what they read.
  const account = accountOf(input.bootstrap.roles[0]?.arn ?? "");
  for (const resource of environmentResources(inv).filter((r) => serviceOf(r) === "s3"))
    for (const action of scopedActions([boundary]).filter((a) => a.split(":")[0]?.toLowerCase() === "s3"))
      if (c.ask([boundary], action, resource, { [RESOURCE_ACCOUNT]: ANOTHER_ACCOUNT }) === "allowed")
        c.fail(
          check,
          `${env}'s boundary allows ${action} on ${resource} of another account (S3 names are global: not ${RESOURCE_ACCOUNT} ${account})`,
        );
  for (const action of IAM_WRITES)
    if (c.ask([boundary], action, "*") === "allowed") c.fail(check, `${env}'s boundary allows ${action}`);
}

/** Resource exposure: no resource policy lets anyone outside the account in. */
function resourcePoliciesStayInAccount(c: Checker, inv: Inventory): void {
  const check = "resource-exposure";
  const account = accountOf(inv.roles[0]?.arn ?? inv.arns.find((a) => accountOf(a) !== "") ?? "");
  for (const p of inv.resourcePolicies)
    for (const s of statements(p.document)) {
      if (s.Effect !== "Allow") continue;
      if (s.Principal === "*") {
        c.fail(check, `${inv.root}: ${p.address} allows "*" (${s.Sid ?? "no Sid"})`);
        continue;
      }
      for (const principal of [s.Principal?.AWS ?? []].flat())
        if (principal === "*")
          // Whatever its conditions (SNS's default policy holds it to the account: every role of it, every
          // environment's included), a policy is no place to grant every principal.
          c.fail(
            check,
            `${inv.root}: ${p.address} allows every principal ("AWS": "*") (${s.Sid ?? "no Sid"})`,
          );
        else if (accountOf(principal) !== account)
          c.fail(check, `${inv.root}: ${p.address} allows ${principal}, outside account ${account}`);
    }
}

export function runChecks(
  input: CheckInput,
  options: { readonly planOnPullRequest: readonly string[] },
): CheckReport {
  const c = new Checker(input);
  const envs = Object.keys(input.environments);
  for (const env of envs) {
    deployRoleStaysInItsLane(c, input, env);
    for (const other of envs) if (other !== env) environmentsAreIsolated(c, input, env, other);
    noKeyTakeoverByTag(c, env);
    ownKeyStillManaged(c, input, env);
    ownAlarmsStillPublish(c, input, env);
    planRolesReadNoData(c, input, env);
    trustIsBoundToWorkflowAndBranch(c, input, env, options.planOnPullRequest.includes(env));
    functionRolesWithinBoundary(c, input, env);
  }
  for (const inv of [input.bootstrap, ...Object.values(input.environments)])
    resourcePoliciesStayInAccount(c, inv);
  return {
    findings: [...new Map(c.findings.map((f) => [`${f.check}\n${f.message}`, f])).values()],
    evaluated: c.evaluated,
  };
}
