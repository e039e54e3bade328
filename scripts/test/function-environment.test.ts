// The environment variables a function reads are declared by its config.ts; terraform/modules/pipeline
// writes them by hand into each function's environment. Nothing else holds the two together before a
// deployed function meets a missing or misspelled variable (a ConfigError at every cold start), so this
// test reads the module's environment maps (parsed HCL, the locals they merge) and holds each function's
// to its config schema: every variable the function needs is set, and nothing is set that it does not read.
import { join } from "node:path";
import {
  FUNCTION_NAMES,
  functionEnvironment,
  type QueueRole,
  SETTINGS_KEY,
} from "@mcp-pipeline/local-pipeline";
import { loadSettings, resourceNames, TUNING, type TunedFunction } from "@mcp-pipeline/settings";
import { body, type HclConfig, parseDirectory, TERRAFORM_ROOT } from "@mcp-pipeline/terraform-hcl";
import { beforeAll, describe, expect, it } from "vitest";
import { dlqRedriveConfigSchema } from "../../functions/dlq-redrive/src/config.ts";
import { fifoWorkerConfigSchema } from "../../functions/fifo-worker/src/config.ts";
import { processorConfigSchema } from "../../functions/processor/src/config.ts";
import { toolWorkerConfigSchema } from "../../functions/tool-worker/src/config.ts";

interface ConfigSchema {
  readonly shape: Readonly<Record<string, unknown>>;
  safeParse(input: unknown): {
    success: boolean;
    error?: { readonly issues: readonly { readonly path: readonly PropertyKey[] }[] };
  };
}

const SCHEMAS: Record<TunedFunction, ConfigSchema> = {
  processor: processorConfigSchema,
  tool_worker: toolWorkerConfigSchema,
  fifo_worker: fifoWorkerConfigSchema,
  dlq_redrive: dlqRedriveConfigSchema,
};

let pipeline: HclConfig;
let locals: Record<string, unknown>;

beforeAll(async () => {
  pipeline = await parseDirectory(join(TERRAFORM_ROOT, "modules", "pipeline"));
  locals = Object.assign({}, ...(pipeline.locals as Record<string, unknown>[]));
});

/**
 * The variable names an environment expression sets for `fn`: an object's keys, or in an expression
 * (`merge(local.worker_environment, { MAX_RECEIVE_COUNT = ... })`) its literal keys and those of the locals
 * it merges; the tuning locals give the function's tuning variables (tuning.ts).
 */
function variablesOf(value: unknown, fn: TunedFunction): Set<string> {
  if (typeof value === "object" && value !== null) return new Set(Object.keys(value));
  const text = String(value);
  const out = new Set([...text.matchAll(/^\s*([A-Z][A-Z0-9_]*)\s*=/gm)].map((m) => m[1] as string));
  if (/\blocal\.tuning_environment\b/.test(text))
    for (const field of Object.values(TUNING[fn])) out.add(field.variable);
  for (const [, name, indexed] of text.matchAll(/\blocal\.(\w+)(\[each\.key\])?/g)) {
    if (name === "tuning_environment" || name === undefined) continue;
    const local = locals[name];
    const entry = indexed ? (local as Record<string, unknown> | undefined)?.[fn] : local;
    if (entry === undefined) throw new Error(`local.${name}${indexed ?? ""} has nothing for ${fn}`);
    for (const variable of variablesOf(entry, fn)) out.add(variable);
  }
  return out;
}

/** What Terraform sets in the function's environment (the free-form `environment` setting aside). */
function terraformVariables(fn: TunedFunction): Set<string> {
  const module = fn === "processor" ? "processor" : "sqs_consumer";
  return variablesOf(body(pipeline, "module", module)?.environment, fn);
}

/** The variables the function cannot start without: those an empty environment is refused for. */
function required(schema: ConfigSchema): string[] {
  const parsed = schema.safeParse({});
  return [...new Set((parsed.error?.issues ?? []).map((i) => String(i.path[0])))].sort();
}

describe("terraform/modules/pipeline sets the environment each function's config.ts reads", () => {
  it.each(Object.keys(SCHEMAS) as TunedFunction[])(
    "%s: every variable it needs is set, and every variable set is one it reads",
    (fn) => {
      const schema = SCHEMAS[fn];
      const set = terraformVariables(fn);
      expect(required(schema).length, "an empty environment is refused").toBeGreaterThan(0);
      for (const variable of required(schema))
        expect([...set], `${fn} needs ${variable}`).toContain(variable);
      for (const variable of set)
        expect(Object.keys(schema.shape), `${fn} reads ${variable}`).toContain(variable);
    },
  );

  it("reads the module's maps, not nothing: the workers get their tables, stream and DLQ", () => {
    expect([...terraformVariables("tool_worker")].sort()).toEqual(
      [
        "DEADLINE_MARGIN_MS",
        "DEAD_LETTER_QUEUE_URL",
        "DEDUPE_TABLE",
        "EVENTS_STREAM_NAME",
        "MAX_RECEIVE_COUNT",
        "RESULTS_BUCKET",
        "RETRY_BACKOFF_BASE_MS",
        "RETRY_BACKOFF_MAX_MS",
        "TEST_TOOLS",
        "TOOL_CALLS_TABLE",
        "WORKER_CONCURRENCY",
      ].sort(),
    );
  });
});

describe("the local stack sets the variables terraform/modules/pipeline sets (issue 26, item 12)", () => {
  it.each(FUNCTION_NAMES)("%s: the same variables, no more, no fewer", async (name) => {
    const settings = await loadSettings(join(TERRAFORM_ROOT, ".."), "dev");
    const queue = { url: "http://127.0.0.1/queue", arn: "arn:aws:sqs:eu-west-1:000000000000:queue" };
    const queues = new Proxy({} as Record<QueueRole, typeof queue>, { get: () => queue });
    const local = functionEnvironment(name, {
      settings,
      names: resourceNames(settings.name_prefix),
      queues,
      scale: (ms) => ms,
    });
    expect(Object.keys(local).sort()).toEqual([...terraformVariables(SETTINGS_KEY[name])].sort());
  });
});
