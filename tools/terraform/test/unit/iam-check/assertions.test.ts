// The threat model's assertions on main's roots before issue 25 (the committed fixture, rendered by
// tf:check on moto at 5096171), which must fail each check of the issue's items, and on hand-made cases.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type CheckInput, runChecks } from "../../../src/iam-check/assertions.ts";
import { type Inventory, inventory, type RedriveAllow, type Role } from "../../../src/iam-check/inventory.ts";
import { loadPlans } from "../../../src/iam-check/main.ts";
import type { Statement } from "../../../src/iam-check/policy-eval.ts";

const fixture = join(import.meta.dirname, "../../../src/iam-check/fixtures/main-5096171");

/** One check's findings on hand-made inventories, for repository o/r deployed from main. */
const findingsOf = (check: string, input: Pick<CheckInput, "bootstrap" | "environments">): string[] =>
  runChecks({ ...input, repository: "o/r", deployBranch: "main" }, { planOnPullRequest: [] })
    .findings.filter((f) => f.check === check)
    .map((f) => f.message);

describe("main's roots at 5096171", () => {
  it("fail every check an item of issue 25 names, with the finding a reviewer would write", async () => {
    const { inventories } = await loadPlans(fixture);
    const { bootstrap, dev, prod } = inventories;
    const report = runChecks(
      {
        bootstrap,
        environments: { dev, prod },
        repository: "example-org/mcp-event-pipelines",
        deployBranch: "main",
      },
      { planOnPullRequest: [] },
    );
    const messages = (check: string) =>
      report.findings.filter((f) => f.check === check).map((f) => f.message);
    // Item 1: the deploy role can make itself administrator, and dev's role reaches prod's.
    expect(messages("deploy-role-iam")).toContain(
      "mcp-dev-deploy may iam:PutRolePolicy on arn:aws:iam::123456789012:role/mcp-dev-deploy",
    );
    expect(messages("deploy-role-iam")).toContain(
      "mcp-dev-deploy may iam:UpdateAssumeRolePolicy on arn:aws:iam::123456789012:role/mcp-dev-plan",
    );
    expect(messages("function-boundary")).toContain(
      "mcp-dev-processor: permissions boundary none, not arn:aws:iam::123456789012:policy/mcp-dev-function-boundary",
    );
    // Item 2: any workflow naming the environment gets the deploy role.
    expect(messages("github-trust")).toContain(
      "mcp-dev-deploy trusts GitHub's default subject (any workflow naming the environment) (repo:example-org/mcp-event-pipelines:environment:dev)",
    );
    // Item 3: plan roles with an AWS-managed policy nobody here reviews (ReadOnlyAccess, data reads included).
    expect(messages("plan-role-reads")).toContain(
      "mcp-prod-plan: attaches arn:aws:iam::aws:policy/ReadOnlyAccess, a policy no root here renders (AWS-managed): what it grants is not reviewed",
    );
    // Item 4: re-tag prod's alarm key, then rewrite its policy.
    expect(
      messages("cross-environment").some((m) =>
        /^mcp-dev-deploy may kms:PutKeyPolicy on prod's key .* \(re-tagged environment=dev\)$/.test(m),
      ),
    ).toBe(true);
    expect(messages("kms-by-tag")).toContain("mcp-dev-deploy may kms:TagResource on a key it did not create");
  });
});

describe("resource-exposure", () => {
  const inventory = (principal: string): Inventory => ({
    root: "dev",
    roles: [],
    managedPolicies: new Map(),
    arns: [
      "arn:aws:s3:::mcp-dev-quarantine-123456789012",
      "arn:aws:sqs:eu-west-1:123456789012:mcp-dev-tool-jobs",
    ],
    resourcePolicies: [
      {
        address: "module.pipeline.aws_s3_bucket_policy.this",
        kind: "bucket",
        resource: "arn:aws:s3:::mcp-dev-quarantine-123456789012",
        document: {
          Statement: [
            {
              Sid: "Read",
              Effect: "Allow",
              Principal: { AWS: principal },
              Action: "s3:GetObject",
              Resource: "*",
            },
          ],
        },
      },
    ],
  });
  const check = (principal: string) =>
    runChecks(
      { bootstrap: inventory(principal), environments: {}, repository: "o/r", deployBranch: "main" },
      { planOnPullRequest: [] },
    ).findings.map((f) => f.message);

  it("fails a resource policy that lets in another account or anyone", () => {
    expect(check("arn:aws:iam::999999999999:root")).toEqual([
      "dev: module.pipeline.aws_s3_bucket_policy.this allows arn:aws:iam::999999999999:root, outside account 123456789012",
    ]);
    expect(check("*")).toHaveLength(1);
    expect(check("arn:aws:iam::123456789012:role/mcp-dev/mcp-dev-processor")).toEqual([]);
  });
});

describe("github-trust: each job's subject as GitHub renders it under the template", () => {
  const repo = "o/r";
  const apply = `${repo}/.github/workflows/apply.yml@refs/heads/main`;
  const ci = `${repo}/.github/workflows/ci.yml@refs/pull/*/merge`;
  const role = (name: string, subjects: string[]): Role => ({
    address: `aws_iam_role.${name}`,
    name,
    arn: `arn:aws:iam::123456789012:role/${name}`,
    path: "/",
    trust: {
      Statement: [
        {
          Effect: "Allow",
          Action: "sts:AssumeRoleWithWebIdentity",
          Principal: {
            Federated: "arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com",
          },
          Condition: {
            StringEquals: { "token.actions.githubusercontent.com:aud": "sts.amazonaws.com" },
            StringLike: { "token.actions.githubusercontent.com:sub": subjects },
          },
        },
      ],
    },
    inline: [],
    attached: [],
    boundary: null,
  });
  const findings = (keys: string[], deploy: string[], plan: string[]) =>
    findingsFor(keys, [role("mcp-dev-deploy", deploy), role("mcp-dev-plan", plan)], ["dev"]);
  const findingsFor = (keys: string[], roles: Role[], planOnPullRequest: string[]) =>
    runChecks(
      {
        bootstrap: {
          root: "bootstrap",
          roles,
          managedPolicies: new Map(),
          resourcePolicies: [],
          arns: [],
        },
        environments: {
          dev: { root: "dev", roles: [], managedPolicies: new Map(), resourcePolicies: [], arns: [] },
        },
        repository: repo,
        deployBranch: "main",
        subjectClaimKeys: keys,
      },
      { planOnPullRequest },
    )
      .findings.filter((f) => f.check === "github-trust")
      .map((f) => f.message);

  it("without the caller's ref, a workflow of any branch that calls apply.yml@main gets the deploy role", () => {
    // oidc.tf before: the template repo, context, job_workflow_ref.
    expect(
      findings(
        ["repo", "context", "job_workflow_ref"],
        [`repo:${repo}:environment:dev:job_workflow_ref:${apply}`],
        [
          `repo:${repo}:ref:refs/heads/main:job_workflow_ref:${apply}`,
          `repo:${repo}:pull_request:job_workflow_ref:${ci}`,
        ],
      ),
    ).toEqual([
      `mcp-dev-deploy trusts a workflow of another branch calling apply.yml@main in the environment (repo:${repo}:environment:dev:job_workflow_ref:${apply}: the template gives it the subject of the job the role is for)`,
      `mcp-dev-deploy trusts a pull request's workflow calling apply.yml@main in the environment (repo:${repo}:environment:dev:job_workflow_ref:${apply}: the template gives it the subject of the job the role is for)`,
    ]);
  });

  it("with the ref in the template and the trust, only apply.yml on main gets it", () => {
    expect(
      findings(
        ["repo", "context", "ref", "job_workflow_ref"],
        [`repo:${repo}:environment:dev:ref:refs/heads/main:job_workflow_ref:${apply}`],
        [
          `repo:${repo}:ref:refs/heads/main:ref:refs/heads/main:job_workflow_ref:${apply}`,
          `repo:${repo}:pull_request:ref:refs/pull/*/merge:job_workflow_ref:${ci}`,
        ],
      ),
    ).toEqual([]);
  });

  it("a role that trusts GitHub's default subject is a finding, whatever the template", () => {
    expect(findings(["repo", "context"], [`repo:${repo}:environment:dev`], [])).toContain(
      `mcp-dev-deploy trusts GitHub's default subject (any workflow naming the environment) (repo:${repo}:environment:dev)`,
    );
  });
  const refTemplate = ["repo", "context", "ref", "job_workflow_ref"];
  const deploySubject = `repo:${repo}:environment:dev:ref:refs/heads/main:job_workflow_ref:${apply}`;
  const planSubject = `repo:${repo}:ref:refs/heads/main:ref:refs/heads/main:job_workflow_ref:${apply}`;
  const prSubject = `repo:${repo}:pull_request:ref:refs/pull/7/merge:job_workflow_ref:${repo}/.github/workflows/ci.yml@refs/pull/7/merge`;

  it("a role that is missing, or trusts no OIDC provider, is a finding and the other is still checked", () => {
    const lambdaOnly: Role = {
      ...role("mcp-dev-plan", [planSubject]),
      trust: {
        Statement: [
          { Effect: "Allow", Action: "sts:AssumeRole", Principal: { Service: "lambda.amazonaws.com" } },
        ],
      },
    };
    expect(findingsFor(refTemplate, [lambdaOnly], [])).toEqual([
      "mcp-dev-deploy: no such role",
      "mcp-dev-plan: trusts no OIDC provider",
    ]);
  });

  it("a role that refuses the job it is for fails the positive control", () => {
    expect(
      findingsFor(refTemplate, [role("mcp-dev-deploy", []), role("mcp-dev-plan", [planSubject])], []),
    ).toEqual([
      `positive control: mcp-dev-deploy refuses apply.yml on the deploy branch in its environment (${deploySubject})`,
    ]);
  });

  it("without plan on pull requests, a plan role that trusts one is a finding", () => {
    expect(
      findingsFor(
        refTemplate,
        [role("mcp-dev-deploy", [deploySubject]), role("mcp-dev-plan", [planSubject, prSubject])],
        [],
      ),
    ).toEqual([`mcp-dev-plan trusts a pull request (${prSubject})`]);
  });

  it("a trust that does not hold the audience to sts.amazonaws.com is a finding", () => {
    const anyAudience = (name: string, subject: string): Role => ({
      ...role(name, [subject]),
      trust: {
        Statement: [
          {
            Effect: "Allow",
            Action: "sts:AssumeRoleWithWebIdentity",
            Principal: {
              Federated: "arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com",
            },
            Condition: { StringLike: { "token.actions.githubusercontent.com:sub": [subject] } },
          },
        ],
      },
    });
    expect(
      findingsFor(
        refTemplate,
        [anyAudience("mcp-dev-deploy", deploySubject), role("mcp-dev-plan", [planSubject])],
        [],
      ),
    ).toEqual(["mcp-dev-deploy trusts a token of another audience than sts.amazonaws.com"]);
  });
});

describe("cross-environment: what another resource decides (alarm actions, dead-letter targets)", () => {
  const A = "arn:aws:sqs:eu-west-1:123456789012";
  const deploy = (env: string, statements: Statement[]): Role => ({
    address: `aws_iam_role.deploy["${env}"]`,
    name: `mcp-${env}-deploy`,
    arn: `arn:aws:iam::123456789012:role/mcp-${env}-deploy`,
    path: "/",
    trust: { Statement: [] },
    inline: [{ name: "deploy", document: { Statement: statements } }],
    attached: [],
    boundary: null,
  });
  const writes: Statement = {
    Effect: "Allow",
    Action: ["sqs:SetQueueAttributes", "cloudwatch:PutMetricAlarm"],
    Resource: [`${A}:mcp-dev-*`, "arn:aws:cloudwatch:eu-west-1:123456789012:alarm:mcp-dev-*"],
  };
  const prod = (
    redriveAllow: RedriveAllow,
    keyCondition: Record<string, Record<string, string>>,
  ): Inventory => ({
    root: "prod",
    roles: [],
    managedPolicies: new Map(),
    arns: [`${A}:mcp-prod-tool-jobs`, "arn:aws:sns:eu-west-1:123456789012:mcp-prod-alarms"],
    queues: [{ arn: `${A}:mcp-prod-tool-jobs`, redriveAllow }],
    resourcePolicies: [
      {
        address: "module.pipeline.module.alarms.aws_kms_key.alarms",
        kind: "key",
        resource: "arn:aws:kms:eu-west-1:123456789012:key/k",
        document: {
          Statement: [
            {
              Effect: "Allow",
              Principal: { Service: "cloudwatch.amazonaws.com" },
              Action: ["kms:Decrypt", "kms:GenerateDataKey*"],
              Resource: "*",
              Condition: keyCondition,
            },
          ],
        },
      },
    ],
  });
  const findings = (statements: Statement[], target: Inventory) =>
    runChecks(
      {
        bootstrap: {
          root: "bootstrap",
          roles: [deploy("dev", statements)],
          managedPolicies: new Map(),
          resourcePolicies: [],
          arns: [],
        },
        environments: {
          dev: { root: "dev", roles: [], managedPolicies: new Map(), resourcePolicies: [], arns: [] },
          prod: target,
        },
        repository: "o/r",
        deployBranch: "main",
      },
      { planOnPullRequest: [] },
    )
      .findings.filter((f) => f.check === "cross-environment")
      .map((f) => f.message);
  const account = { StringEquals: { "aws:SourceAccount": "123456789012" } };
  const prodAlarms = {
    ...account,
    ArnLike: { "aws:SourceArn": "arn:aws:cloudwatch:eu-west-1:123456789012:alarm:mcp-prod-*" },
  };

  it("a source queue without a redrive allow policy takes another environment's dead letters", () => {
    expect(findings([writes], prod({ permission: "allowAll" }, prodAlarms))).toContain(
      `mcp-dev-deploy may send its queues' dead letters into prod's ${A}:mcp-prod-tool-jobs (a RedrivePolicy naming it; its redrive allow policy admits any queue of the account)`,
    );
    expect(findings([writes], prod({ permission: "denyAll" }, prodAlarms)).join("\n")).not.toContain(
      "dead letters",
    );
  });

  it("an alarm of one environment may not page another's topic: the deploy role's deny, the key's condition", () => {
    const deny: Statement = {
      Effect: "Deny",
      Action: ["cloudwatch:PutMetricAlarm"],
      Resource: "*",
      Condition: {
        "ForAnyValue:StringNotLike": {
          "cloudwatch:AlarmActions": "arn:aws:sns:eu-west-1:123456789012:mcp-dev-*",
        },
      },
    };
    expect(findings([writes], prod({ permission: "denyAll" }, account))).toEqual([
      "mcp-dev-deploy may point an alarm at prod's topic arn:aws:sns:eu-west-1:123456789012:mcp-prod-alarms (cloudwatch:AlarmActions)",
      "prod's key arn:aws:kms:eu-west-1:123456789012:key/k lets CloudWatch publish for dev's alarm arn:aws:cloudwatch:eu-west-1:123456789012:alarm:mcp-dev-probe",
    ]);
    expect(findings([writes, deny], prod({ permission: "denyAll" }, prodAlarms))).toEqual([]);
  });
});

describe("cross-environment: what a role's own policy reaches of another environment", () => {
  const account = "123456789012";
  const A = `arn:aws:sqs:eu-west-1:${account}`;
  const stateBucket = "arn:aws:s3:::tfstate-123456789012";
  const role = (env: string, kind: string, statements: Statement[]): Role => ({
    address: `aws_iam_role.${kind}["${env}"]`,
    name: `mcp-${env}-${kind}`,
    arn: `arn:aws:iam::${account}:role/mcp-${env}-${kind}`,
    path: "/",
    trust: { Statement: [] },
    inline: [{ name: kind, document: { Statement: statements } }],
    attached: [],
    boundary: null,
  });
  const prodProcessor: Role = { ...role("prod", "processor", []), path: "/mcp-prod/" };
  const prod = (redriveAllow: RedriveAllow): Inventory => ({
    root: "prod",
    roles: [prodProcessor],
    managedPolicies: new Map(),
    resourcePolicies: [],
    arns: [
      `${A}:mcp-prod-tool-jobs`,
      `${A}:mcp-prod-tool-jobs-dlq`,
      `arn:aws:lambda:eu-west-1:${account}:function:mcp-prod-processor`,
    ],
    queues: [{ arn: `${A}:mcp-prod-tool-jobs-dlq`, redriveAllow }],
  });
  const findings = (roles: Role[], target: Inventory) =>
    findingsOf("cross-environment", {
      bootstrap: {
        root: "bootstrap",
        roles,
        managedPolicies: new Map(),
        resourcePolicies: [],
        arns: [stateBucket],
      },
      environments: {
        dev: { root: "dev", roles: [], managedPolicies: new Map(), resourcePolicies: [], arns: [] },
        prod: target,
      },
    }).filter((m) => m.includes("prod's"));
  const everyMcp: Statement[] = [
    { Effect: "Allow", Action: ["sqs:SendMessage", "sqs:SetQueueAttributes"], Resource: `${A}:mcp-*` },
    { Effect: "Allow", Action: "s3:PutObject", Resource: `${stateBucket}/mcp-event-pipelines/*` },
    { Effect: "Allow", Action: "iam:PassRole", Resource: `arn:aws:iam::${account}:role/mcp-*` },
  ];
  const ownOnly: Statement[] = [
    { Effect: "Allow", Action: ["sqs:SendMessage", "sqs:SetQueueAttributes"], Resource: `${A}:mcp-dev-*` },
    { Effect: "Allow", Action: "s3:PutObject", Resource: `${stateBucket}/mcp-event-pipelines/dev/*` },
    { Effect: "Allow", Action: "iam:PassRole", Resource: `arn:aws:iam::${account}:role/mcp-dev/*` },
  ];

  it("a deploy or plan role whose resources match another environment's names reaches its resources, roles and state", () => {
    for (const kind of ["deploy", "plan"]) {
      const messages = findings([role("dev", kind, everyMcp)], prod({ permission: "denyAll" }));
      expect(messages).toEqual([
        `mcp-dev-${kind} may sqs:SendMessage on prod's ${A}:mcp-prod-tool-jobs`,
        `mcp-dev-${kind} may sqs:SetQueueAttributes on prod's ${A}:mcp-prod-tool-jobs`,
        `mcp-dev-${kind} may sqs:SendMessage on prod's ${A}:mcp-prod-tool-jobs-dlq`,
        `mcp-dev-${kind} may sqs:SetQueueAttributes on prod's ${A}:mcp-prod-tool-jobs-dlq`,
        `mcp-dev-${kind} may s3:PutObject on prod's ${stateBucket}/mcp-event-pipelines/prod/terraform.tfstate`,
        `mcp-dev-${kind} may iam:PassRole on prod's ${prodProcessor.arn}`,
      ]);
    }
    expect(findings([role("dev", "deploy", ownOnly)], prod({ permission: "denyAll" }))).toEqual([]);
  });

  it("a role that may create any event source mapping may map one onto another environment's function", () => {
    const mappings: Statement = { Effect: "Allow", Action: "lambda:CreateEventSourceMapping", Resource: "*" };
    expect(
      findings([role("dev", "deploy", [...ownOnly, mappings])], prod({ permission: "denyAll" })),
    ).toEqual([
      `mcp-dev-deploy may map an event source onto prod's function arn:aws:lambda:eu-west-1:${account}:function:mcp-prod-processor`,
    ]);
  });

  it("a DLQ whose redrive allow policy names a queue of another environment takes its dead letters", () => {
    const byQueue = (sources: string[]): RedriveAllow => ({ permission: "byQueue", sources });
    expect(
      findings(
        [role("dev", "deploy", ownOnly)],
        prod(byQueue([`${A}:mcp-prod-tool-jobs`, `${A}:mcp-dev-tool-jobs`])),
      ),
    ).toEqual([
      `mcp-dev-deploy may send its queues' dead letters into prod's ${A}:mcp-prod-tool-jobs-dlq (a RedrivePolicy naming it; its redrive allow policy admits ${A}:mcp-dev-tool-jobs)`,
    ]);
    expect(findings([role("dev", "deploy", ownOnly)], prod(byQueue([`${A}:mcp-prod-tool-jobs`])))).toEqual(
      [],
    );
  });
});

describe("deploy-role-iam: no principal, identity provider or policy of the account", () => {
  it("a deploy role allowed iam:Create* is a finding for each", () => {
    const deploy: Role = {
      address: 'aws_iam_role.deploy["dev"]',
      name: "mcp-dev-deploy",
      arn: "arn:aws:iam::123456789012:role/mcp-dev-deploy",
      path: "/",
      trust: { Statement: [] },
      inline: [
        {
          name: "deploy",
          document: { Statement: [{ Effect: "Allow", Action: "iam:Create*", Resource: "*" }] },
        },
      ],
      attached: [],
      boundary: null,
    };
    const messages = runChecks(
      {
        bootstrap: {
          root: "bootstrap",
          roles: [deploy],
          managedPolicies: new Map(),
          resourcePolicies: [],
          arns: [],
        },
        environments: {
          dev: { root: "dev", roles: [], managedPolicies: new Map(), resourcePolicies: [], arns: [] },
        },
        repository: "o/r",
        deployBranch: "main",
      },
      { planOnPullRequest: [] },
    ).findings.map((f) => f.message);
    for (const action of [
      "iam:CreateOpenIDConnectProvider",
      "iam:CreateSAMLProvider",
      "iam:CreateUser",
      "iam:CreatePolicy",
    ])
      expect(messages).toContain(`mcp-dev-deploy may ${action} (*)`);
  });
});

describe("function-boundary: a bucket of the same name in another account", () => {
  // S3's ARNs hold no account: arn:aws:s3:::mcp-dev-* names a bucket of that name in any account. Once one
  // of the environment's buckets is gone, whoever registers its name elsewhere gets what the functions write.
  const account = "123456789012";
  const boundaryArn = `arn:aws:iam::${account}:policy/mcp-dev-function-boundary`;
  const bucket = `arn:aws:s3:::mcp-dev-quarantine-${account}`;
  const objects = (condition?: Statement["Condition"]): Statement => ({
    Effect: "Allow",
    Action: ["s3:GetObject", "s3:PutObject"],
    Resource: "arn:aws:s3:::mcp-dev-*",
    ...(condition ? { Condition: condition } : {}),
  });
  const findings = (boundary: Statement) => {
    const processor: Role = {
      address: "module.pipeline.module.processor.aws_iam_role.this",
      name: "mcp-dev-processor",
      arn: `arn:aws:iam::${account}:role/mcp-dev/mcp-dev-processor`,
      path: "/mcp-dev/",
      trust: {
        Statement: [
          { Effect: "Allow", Principal: { Service: "lambda.amazonaws.com" }, Action: "sts:AssumeRole" },
        ],
      },
      inline: [
        {
          name: "processor",
          document: {
            Statement: [{ Effect: "Allow", Action: "s3:PutObject", Resource: `${bucket}/kinesis/*` }],
          },
        },
      ],
      attached: [],
      boundary: boundaryArn,
    };
    const deploy: Role = {
      address: 'aws_iam_role.deploy["dev"]',
      name: "mcp-dev-deploy",
      arn: `arn:aws:iam::${account}:role/mcp-dev-deploy`,
      path: "/",
      trust: { Statement: [] },
      inline: [],
      attached: [],
      boundary: null,
    };
    return findingsOf("function-boundary", {
      bootstrap: {
        root: "bootstrap",
        roles: [deploy],
        managedPolicies: new Map([[boundaryArn, { Statement: [boundary] }]]),
        resourcePolicies: [],
        arns: [],
      },
      environments: {
        dev: {
          root: "dev",
          roles: [processor],
          managedPolicies: new Map(),
          resourcePolicies: [],
          arns: [bucket],
        },
      },
    });
  };

  it("a boundary that allows objects of any account's bucket of the name is a finding", () => {
    expect(findings(objects()).filter((m) => m.includes("/kinesis/probe.json"))).toEqual([
      `dev's boundary allows s3:GetObject on ${bucket}/kinesis/probe.json of another account (S3 names are global: not aws:ResourceAccount ${account})`,
      `dev's boundary allows s3:PutObject on ${bucket}/kinesis/probe.json of another account (S3 names are global: not aws:ResourceAccount ${account})`,
    ]);
  });

  it("held to the account (aws:ResourceAccount), the function's own writes are still allowed", () => {
    expect(findings(objects({ StringEquals: { "aws:ResourceAccount": account } }))).toEqual([]);
  });
});

describe("resource-exposure: the policy a topic holds, rendered or AWS's default", () => {
  // A topic created without a policy gets SNS's default one (moto renders the same): every principal of
  // the account may publish, subscribe, change the topic's attributes and permissions, or delete it. In
  // one account, that is every other environment's roles.
  const topic = "arn:aws:sns:eu-west-1:123456789012:mcp-prod-alarms";
  const defaultPolicy = JSON.stringify({
    Id: "__default_policy_ID",
    Statement: [
      {
        Sid: "__default_statement_ID",
        Effect: "Allow",
        Principal: { AWS: "*" },
        Action: [
          "SNS:Publish",
          "SNS:Subscribe",
          "SNS:SetTopicAttributes",
          "SNS:AddPermission",
          "SNS:DeleteTopic",
        ],
        Resource: topic,
        Condition: { StringEquals: { "AWS:SourceOwner": "123456789012" } },
      },
    ],
  });
  const plan = (policy: string) => ({
    planned_values: {
      root_module: {
        resources: [
          {
            address: "module.pipeline.module.alarms.aws_sns_topic.alarms",
            mode: "managed",
            type: "aws_sns_topic",
            values: { arn: topic, name: "mcp-prod-alarms", policy },
          },
        ],
      },
    },
  });
  const findings = (policy: string) =>
    findingsOf("resource-exposure", { bootstrap: inventory("prod", plan(policy)), environments: {} });

  it("SNS's default policy on a topic is a finding", () => {
    expect(findings(defaultPolicy)).toEqual([
      'prod: module.pipeline.module.alarms.aws_sns_topic.alarms allows every principal ("AWS": "*") (__default_statement_ID)',
    ]);
  });

  it("a topic policy that lets CloudWatch alone publish is not", () => {
    const cloudWatchOnly = JSON.stringify({
      Statement: [
        {
          Effect: "Allow",
          Principal: { Service: "cloudwatch.amazonaws.com" },
          Action: "sns:Publish",
          Resource: topic,
        },
      ],
    });
    expect(findings(cloudWatchOnly)).toEqual([]);
  });
});

describe("cross-environment: the alarm topic's policy lets CloudWatch publish for its own alarms only", () => {
  const account = "123456789012";
  const alarms = (env: string) => `arn:aws:cloudwatch:eu-west-1:${account}:alarm:mcp-${env}-*`;
  const topicOf = (env: string) => `arn:aws:sns:eu-west-1:${account}:mcp-${env}-alarms`;
  const environment = (env: string, sourceArn: string): Inventory => ({
    root: env,
    roles: [],
    managedPolicies: new Map(),
    arns: [topicOf(env), `arn:aws:cloudwatch:eu-west-1:${account}:alarm:mcp-${env}-processor-iterator-age`],
    resourcePolicies: [
      {
        address: "module.pipeline.module.alarms.aws_sns_topic_policy.alarms",
        kind: "topic",
        resource: topicOf(env),
        document: {
          Statement: [
            {
              Effect: "Allow",
              Principal: { Service: "cloudwatch.amazonaws.com" },
              Action: "sns:Publish",
              Resource: topicOf(env),
              Condition: {
                StringEquals: { "aws:SourceAccount": account },
                ArnLike: { "aws:SourceArn": sourceArn },
              },
            },
          ],
        },
      },
    ],
  });
  const deploy = (env: string): Role => ({
    address: `aws_iam_role.deploy["${env}"]`,
    name: `mcp-${env}-deploy`,
    arn: `arn:aws:iam::${account}:role/mcp-${env}-deploy`,
    path: "/",
    trust: { Statement: [] },
    inline: [],
    attached: [],
    boundary: null,
  });
  const findings = (prodSourceArn: string) =>
    findingsOf("cross-environment", {
      bootstrap: {
        root: "bootstrap",
        roles: [deploy("dev"), deploy("prod")],
        managedPolicies: new Map(),
        resourcePolicies: [],
        arns: [],
      },
      environments: { dev: environment("dev", alarms("dev")), prod: environment("prod", prodSourceArn) },
    }).filter((m) => / CloudWatch (for|publish for) /.test(m));

  it("each topic admits its own environment's alarms, and no other's", () => {
    expect(findings(alarms("prod"))).toEqual([]);
  });

  it("a topic that admits every alarm of the account is a finding; one that admits none fails the control", () => {
    expect(findings(`arn:aws:cloudwatch:eu-west-1:${account}:alarm:*`)).toEqual([
      `prod's topic ${topicOf("prod")} lets CloudWatch publish for dev's alarm arn:aws:cloudwatch:eu-west-1:${account}:alarm:mcp-dev-probe`,
    ]);
    expect(findings(alarms("staging"))).toEqual([
      `positive control: prod's topic ${topicOf("prod")} refuses CloudWatch for its own alarm arn:aws:cloudwatch:eu-west-1:${account}:alarm:mcp-prod-processor-iterator-age`,
    ]);
  });
});
