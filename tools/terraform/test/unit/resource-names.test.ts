// Resource names have one declaration, terraform/modules/pipeline/resource-names.json: Terraform derives
// the names from it in main.tf (and the queue module adds .fifo and -dlq), resourceNames() derives them
// in TypeScript. This test evaluates Terraform's name expressions over the parsed HCL and holds the two
// to each other, so a suffix, a template or a FIFO flag changed on one side only fails here.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { FUNCTION_KEYS, QUEUE_KEYS, queueUrlVariables, resourceNames } from "@mcp-pipeline/settings";
import { beforeAll, describe, expect, it } from "vitest";
import { body, type HclConfig, parseDirectory, TERRAFORM_ROOT } from "../../src/index.js";

const PIPELINE = join(TERRAFORM_ROOT, "modules", "pipeline");
const PREFIX = "mcp-test";
const ACCOUNT = "123456789012";

let pipeline: HclConfig;
let queueModule: HclConfig;
let declared: Record<string, unknown>;

beforeAll(async () => {
  pipeline = await parseDirectory(PIPELINE);
  queueModule = await parseDirectory(join(TERRAFORM_ROOT, "modules", "queue"));
  declared = JSON.parse(await readFile(join(PIPELINE, "resource-names.json"), "utf8"));
});

/** Follows `local.names.queues[c.queue].suffix` through `scope`; a bracketed name is itself a path. */
function lookup(path: string, scope: Record<string, unknown>): unknown {
  const steps = path.match(/[^.[\]]+|\[[^\]]+\]/g) ?? [];
  let value: unknown = scope;
  let first = true;
  for (const step of steps) {
    const key = step.startsWith("[") ? String(lookup(step.slice(1, -1), scope)) : step;
    value = first && key in scope ? scope[key] : (value as Record<string, unknown> | undefined)?.[key];
    first = false;
  }
  if (typeof value !== "string" && typeof value !== "boolean")
    throw new Error(`${path} is not a name part in this scope`);
  return value;
}

/** Evaluates a Terraform string template whose interpolations are plain references. */
function evaluate(template: unknown, scope: Record<string, unknown>): string {
  return String(template).replace(/\$\{([^}]+)\}/g, (_, path: string) => String(lookup(path, scope)));
}

/** `${expression}`, as Terraform writes an interpolation. */
const ref = (expression: string) => `\${${expression}}`;
const locals = () =>
  Object.assign({}, ...(pipeline.locals as Record<string, unknown>[])) as Record<string, unknown>;
const scope = (extra: Record<string, unknown> = {}) => ({
  local: { p: PREFIX, names: declared },
  data: { aws_caller_identity: { current: { account_id: ACCOUNT } } },
  ...extra,
});
const moduleName = (module: string, extra: Record<string, unknown> = {}) =>
  evaluate(body(pipeline, "module", module)?.name, scope(extra));

describe("resourceNames() and terraform/modules/pipeline derive the same names", () => {
  it("main.tf reads resource-names.json", () => {
    expect(locals().names).toBe(ref(`jsondecode(file("${ref("path.module")}/resource-names.json"))`));
  });

  it("the stream, its consumer, the tables and the buckets (with the account id)", () => {
    const names = resourceNames(PREFIX, { accountId: ACCOUNT });
    expect(names.stream).toBe(moduleName("stream"));
    // `var.processor.esm.enhanced_fan_out ? "<template>" : null`
    const consumer = /\?\s*"(.+)"\s*:\s*null/.exec(
      String(body(pipeline, "module", "stream")?.enhanced_fan_out_consumer_name),
    )?.[1];
    expect(names.streamConsumer).toBe(evaluate(consumer, scope()));
    expect(names.toolCallsTable).toBe(moduleName("tool_calls_table"));
    expect(names.dedupeTable).toBe(moduleName("dedupe_table"));
    expect(names.quarantineBucket).toBe(moduleName("quarantine_bucket"));
    expect(names.resultsBucket).toBe(moduleName("results_bucket"));
    // A local stack has no account: its buckets are <prefix>-<suffix>.
    expect(resourceNames(PREFIX).quarantineBucket).toBe(`${PREFIX}-quarantine`);
  });

  it("the functions: the processor and each SQS consumer of the for_each", () => {
    const names = resourceNames(PREFIX);
    const consumers = locals().sqs_consumer_settings as Record<string, unknown>;
    expect(Object.keys(consumers).sort()).toEqual(FUNCTION_KEYS.filter((k) => k !== "processor").sort());
    expect(Object.keys(consumers).sort()).toEqual(QUEUE_KEYS.map((k) => names.queues[k].consumer).sort());
    expect(names.functions.processor).toBe(moduleName("processor"));
    for (const key of Object.keys(consumers))
      expect(names.functions[key as keyof typeof names.functions]).toBe(
        moduleName("sqs_consumer", { each: { key } }),
      );
  });

  it("the queues and their DLQs: <prefix>-<suffix>[.fifo] and <prefix>-<suffix>-dlq[.fifo]", () => {
    const names = resourceNames(PREFIX);
    const queues = locals().queues;
    // local.queues is `{ for key, c in local.sqs_consumers : c.queue => { name = ..., fifo = ... } }`.
    const template = /\bname\s*=\s*"([^"]+)"/.exec(String(queues))?.[1];
    const fifoPath = /\bfifo\s*=\s*([\w.[\]]+)/.exec(String(queues))?.[1];
    expect(template, "local.queues names each queue").toBeDefined();
    expect(fifoPath, "local.queues says whether each queue is FIFO").toBeDefined();
    // One consumer per queue, the one resource-names.json names.
    expect(locals().sqs_consumers).toMatch(/for queue, q in local\.names\.queues\s*:\s*q\.consumer\s*=>/);
    expect(body(pipeline, "module", "queue")?.name).toBe(ref("each.value.name"));
    const source = (queueModule.resource as Record<string, Record<string, Record<string, unknown>[]>>)
      .aws_sqs_queue;
    const queueLocals = Object.assign({}, ...(queueModule.locals as Record<string, unknown>[]));
    for (const key of QUEUE_KEYS) {
      const c = { queue: key };
      const fifo = lookup(String(fifoPath), scope({ c })) === true;
      const moduleScope = {
        var: { name: evaluate(template, scope({ c })) },
        local: { suffix: fifo ? ".fifo" : "" },
      };
      const dlqLocal = evaluate(queueLocals.dlq_name, moduleScope);
      expect(names.queues[key].fifo, key).toBe(fifo);
      expect(names.queues[key].name, key).toBe(evaluate(source?.this?.[0]?.name, moduleScope));
      expect(source?.dlq?.[0]?.name).toBe(ref("local.dlq_name"));
      expect(names.queues[key].dlqName, key).toBe(dlqLocal);
    }
    expect(names.queues.session_jobs.name).toBe(`${PREFIX}-session-jobs.fifo`);
  });

  it("the variables that carry a queue's URLs", () => {
    expect(queueUrlVariables("session_jobs")).toEqual({
      queue: "SESSION_JOBS_QUEUE_URL",
      dlq: "SESSION_JOBS_DLQ_URL",
    });
  });
});
