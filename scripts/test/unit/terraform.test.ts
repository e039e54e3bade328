// What `terraform apply` cannot show: documentation, descriptions, pins, the backend, least privilege and
// agreement with the settings loader. Wiring, ranges as applied, the ESMs, queues, table and alarms are
// checked by `npm run tf:check` against what the emulator holds after apply (docs/deploy.md).
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { environmentSettingsSchema, loadSettings } from "@mcp-pipeline/settings";
import {
  body,
  expression,
  type HclConfig,
  names,
  parseDirectory,
  TERRAFORM_ROOT,
  terraformDirectories,
} from "@mcp-pipeline/terraform";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { MODULES, moduleDocs, withDocs } from "../../../tools/terraform/src/docs/module-docs.ts";

const ENVIRONMENTS = ["dev", "prod"];
const ROOTS = ["bootstrap"];
const parsed = new Map<string, HclConfig>();

beforeAll(async () => {
  for (const dir of await terraformDirectories()) parsed.set(dir, await parseDirectory(dir));
});

const moduleDir = (m: string) => join(TERRAFORM_ROOT, "modules", m);
const config = (dir: string) => parsed.get(dir) as HclConfig;
const pipeline = () => config(moduleDir("pipeline"));

describe("modules follow one structure", () => {
  it.each(MODULES)("%s has main, variables, outputs, versions and an up-to-date README", async (module) => {
    const files = await readdir(moduleDir(module));
    expect(files).toEqual(
      expect.arrayContaining(["main.tf", "variables.tf", "outputs.tf", "versions.tf", "README.md"]),
    );
    const readme = await readFile(join(moduleDir(module), "README.md"), "utf8");
    // Stale tables: run `npm run docs:terraform`.
    expect(readme).toBe(withDocs(readme, await moduleDocs(moduleDir(module))));
  });

  it.each(MODULES)("%s: every variable is typed and described, every output described", (module) => {
    const c = config(moduleDir(module));
    for (const name of names(c, "variable")) {
      const v = body(c, "variable", name);
      expect(v?.type, `${module}.${name} type`).toBeDefined();
      expect(String(v?.description ?? ""), `${module}.${name} description`).not.toBe("");
      expect(expression(v?.type), `${module}.${name}`).not.toBe("any");
    }
    for (const name of names(c, "output")) {
      expect(String(body(c, "output", name)?.description ?? ""), `${module} output ${name}`).not.toBe("");
    }
  });

  it.each(ROOTS)(
    "%s: the bootstrap root has its README, typed variables and pinned versions",
    async (root) => {
      const dir = join(TERRAFORM_ROOT, root);
      expect(await readdir(dir)).toEqual(
        expect.arrayContaining(["main.tf", "variables.tf", "outputs.tf", "versions.tf", "README.md"]),
      );
      for (const name of names(config(dir), "variable"))
        expect(body(config(dir), "variable", name)?.type, name).toBeDefined();
    },
  );

  it.each(MODULES)("%s pins Terraform >= 1.10 and the AWS provider to major 6", (module) => {
    const terraform = ((config(moduleDir(module)).terraform as HclConfig[]) ?? [])[0] as HclConfig;
    expect(terraform.required_version).toBe(">= 1.10");
    const providers = (terraform.required_providers as HclConfig[])[0] as Record<
      string,
      { source: string; version: string }
    >;
    expect(providers.aws).toEqual({ source: "hashicorp/aws", version: ">= 6.0, < 7.0" });
  });
});

describe("IAM: least privilege", () => {
  type Statement = { sid: string; actions: string[] | string; resources: string[] | string };
  const locals = () =>
    Object.assign({}, ...((pipeline().locals as Record<string, unknown>[] | undefined) ?? [])) as Record<
      string,
      unknown
    >;
  /**
   * A local's statement list, `${local.worker_statements}` followed to the list it names; any other
   * expression (a `concat(...)`) is one pseudo-statement whose actions and resources are its text, which the
   * wildcard checks below read all the same. (What each statement allows is checked against the functions'
   * calls after apply: tools/terraform/src/tf-check/permissions.)
   */
  const statementList = (value: unknown): Statement[] => {
    const text = typeof value === "string" ? value : "";
    const named = /^\$\{local\.(\w+)\}$/.exec(text);
    if (named) return statementList(locals()[named[1] as string]);
    if (text !== "") return [{ sid: "(expression)", actions: text, resources: text }];
    return (value ?? []) as Statement[];
  };
  const statements = () => {
    const out: { module: string; sid: string; actions: string; resources: string }[] = [];
    const push = (module: string, list: Statement[]) => {
      for (const s of list) {
        out.push({
          module,
          sid: s.sid,
          actions: JSON.stringify(s.actions),
          resources: JSON.stringify(s.resources),
        });
      }
    };
    for (const name of names(pipeline(), "module")) {
      const block = body(pipeline(), "module", name) ?? {};
      if (block.for_each === undefined) push(name, statementList(block.policy_statements));
    }
    // The SQS consumers (one for_each): the statements on their own queue are written in the module
    // block, the others per consumer in local.sqs_consumer_statements.
    const consumerStatements = locals().sqs_consumer_statements as Record<string, unknown>;
    for (const [key, list] of Object.entries(consumerStatements)) push(key, statementList(list));
    const ownQueue = expression(body(pipeline(), "module", "sqs_consumer")?.policy_statements);
    for (const key of Object.keys(consumerStatements))
      push(key, [{ sid: `${key}:own queue`, actions: ownQueue, resources: ownQueue }]);
    return out;
  };

  it("every function gets statements, none with a wildcard action or resource", () => {
    const all = statements();
    expect(new Set(all.map((s) => s.module))).toEqual(
      new Set(["processor", "tool_worker", "fifo_worker", "dlq_redrive"]),
    );
    for (const s of all) {
      expect(s.actions, `${s.module}/${s.sid}`).not.toMatch(/"\*"|:\*"/);
      expect(s.resources, `${s.module}/${s.sid}`).not.toMatch(/^\["\*"\]$|"arn:aws:[a-z0-9-]+:\*/);
    }
  });

  it("no Allow statement anywhere (modules, environments, bootstrap) has a wildcard action; * as a resource only where AWS has no resource type", () => {
    const allowedStar = new Set([
      "Tracing",
      "CreateEventSourceMapping",
      "CreateAlarmTopicKey",
      "ReadWithoutResourceType",
    ]);
    let count = 0;
    for (const [dir, c] of parsed) {
      const documents = ((c.data as Record<string, Record<string, HclConfig[]>> | undefined)
        ?.aws_iam_policy_document ?? {}) as Record<string, HclConfig[]>;
      for (const [name, blocks] of Object.entries(documents)) {
        for (const statement of (blocks[0]?.statement ?? []) as HclConfig[]) {
          if (statement.effect === "Deny") continue;
          count += 1;
          const where = `${dir.replace(TERRAFORM_ROOT, "terraform")} ${name}/${String(statement.sid ?? "")}`;
          // A list named by a local (`actions = local.bounded_role_writes`) is followed to that list.
          const named = /^\$\{local\.(\w+)\}$/.exec(String(statement.actions));
          const dirLocals = Object.assign({}, ...((c.locals as Record<string, unknown>[] | undefined) ?? []));
          const actions = (named ? dirLocals[named[1] as string] : (statement.actions ?? [])) as string[];
          expect(actions, where).toBeInstanceOf(Array);
          expect(
            actions.filter((a) => a.includes("*")),
            where,
          ).toEqual([]);
          if (JSON.stringify(statement.resources ?? []).includes('"*"'))
            expect(allowedStar, where).toContain(statement.sid);
        }
      }
    }
    expect(count).toBeGreaterThan(10);
  });

  it("the function module's own statements use * only for X-Ray, which has no resource-level permissions", async () => {
    const text = await readFile(join(moduleDir("function"), "main.tf"), "utf8");
    const wildcards = [...text.matchAll(/resources\s*=\s*\["\*"\]/g)];
    expect(wildcards).toHaveLength(1);
    expect(text).toMatch(
      /actions\s*=\s*\["xray:PutTraceSegments", "xray:PutTelemetryRecords"\]\s*\n\s*resources\s*=\s*\["\*"\]/,
    );
  });
});

describe("environments", () => {
  it.each(ENVIRONMENTS)("%s: an S3 backend with a lock file and encryption", (env) => {
    const dir = join(TERRAFORM_ROOT, "environments", env);
    const terraform = ((config(dir).terraform as HclConfig[]) ?? []).find((t) => t.backend) as HclConfig;
    const backend = (terraform.backend as Record<string, HclConfig[]>).s3?.[0];
    expect(backend).toMatchObject({
      use_lockfile: true,
      encrypt: true,
      key: `mcp-event-pipelines/${env}/terraform.tfstate`,
    });
  });

  it.each(ENVIRONMENTS)("%s: terraform.tfvars.json sets exactly the declared variables", async (env) => {
    const dir = join(TERRAFORM_ROOT, "environments", env);
    const tfvars = JSON.parse(await readFile(join(dir, "terraform.tfvars.json"), "utf8")) as Record<
      string,
      unknown
    >;
    const declared = names(config(dir), "variable");
    for (const key of Object.keys(tfvars))
      expect(declared, `${env}: ${key} is not a variable`).toContain(key);
    for (const name of declared) {
      const optional = "default" in (body(config(dir), "variable", name) ?? {});
      if (!optional) expect(Object.keys(tfvars), `${env}: ${name} has no value`).toContain(name);
    }
    await expect(loadSettings(join(TERRAFORM_ROOT, ".."), env)).resolves.toBeDefined();
  });
});

describe("Terraform's validation blocks and the settings loader agree on AWS's ranges", () => {
  const json = z.toJSONSchema(environmentSettingsSchema) as {
    properties: Record<
      string,
      {
        properties: Record<
          string,
          {
            minimum?: number;
            maximum?: number;
            properties?: Record<string, { minimum?: number; maximum?: number }>;
          }
        >;
      }
    >;
  };
  const bound = (path: string[]) => {
    let node: unknown = json;
    for (const key of path) node = (node as { properties: Record<string, unknown> }).properties[key];
    // A nullable number is anyOf [number, null].
    const options = (node as { anyOf?: { minimum?: number }[] }).anyOf;
    return (options?.find((o) => o.minimum !== undefined) ?? node) as { minimum?: number; maximum?: number };
  };
  const cases: [string[], string][] = [
    [["processor", "timeout_seconds"], "var.processor.timeout_seconds"],
    [["processor", "memory_mb"], "var.processor.memory_mb"],
    [["tool_worker", "timeout_seconds"], "var.tool_worker.timeout_seconds"],
    [["processor", "esm", "parallelization_factor"], "var.processor.esm.parallelization_factor"],
    [["processor", "esm", "maximum_retry_attempts"], "var.processor.esm.maximum_retry_attempts"],
    [["stream", "retention_period_hours"], "var.stream.retention_period_hours"],
    [["tool_worker", "esm", "maximum_concurrency"], "var.tool_worker.esm.maximum_concurrency"],
  ];

  it.each(cases)("%j", async (path, reference) => {
    const { minimum, maximum } = bound(path);
    expect(minimum, "the loader has a lower bound").toBeDefined();
    const text = await readFile(join(moduleDir("pipeline"), "variables.tf"), "utf8");
    const conditions = [...text.matchAll(/condition\s*=\s*(.+)/g)]
      .map((m) => m[1] ?? "")
      .filter((c) => c.includes(reference));
    expect(
      conditions.some((c) => c.includes(`${reference} >= ${minimum}`)),
      `${reference} >= ${minimum}`,
    ).toBe(true);
    expect(
      conditions.some((c) => c.includes(`${reference} <= ${maximum}`)),
      `${reference} <= ${maximum}`,
    ).toBe(true);
  });

  it("record age: -1 or 60..604800 in both", async () => {
    const text = await readFile(join(moduleDir("pipeline"), "variables.tf"), "utf8");
    expect(text).toContain(
      "var.processor.esm.maximum_record_age_in_seconds == -1 || (var.processor.esm.maximum_record_age_in_seconds >= 60 && var.processor.esm.maximum_record_age_in_seconds <= 604800)",
    );
    const settings = await loadSettings(join(TERRAFORM_ROOT, ".."), "dev");
    const withAge = (age: number) => ({
      ...settings,
      processor: {
        ...settings.processor,
        esm: { ...settings.processor.esm, maximum_record_age_in_seconds: age },
      },
    });
    expect(environmentSettingsSchema.safeParse(withAge(59)).success).toBe(false);
    expect(environmentSettingsSchema.safeParse(withAge(-1)).success).toBe(true);
    expect(environmentSettingsSchema.safeParse(withAge(604_801)).success).toBe(false);
  });
});
