// Each function's config.ts reads what terraform/modules/pipeline/function-environment.json declares for it
// (the environment Terraform and the local pipeline set): a declared environment parses, with nothing set
// that the function does not read and nothing it needs left undeclared. A required variable added to a
// config.ts without its declaration fails here, not at every cold start of a deployed function.
import { join } from "node:path";
import {
  FUNCTION_KEYS,
  type FunctionKey,
  functionEnvironment,
  loadSettings,
  resourceNames,
} from "@mcp-pipeline/settings";
import { describe, expect, it } from "vitest";
import { dlqRedriveConfigSchema } from "../../../functions/dlq-redrive/src/config.ts";
import { fifoWorkerConfigSchema } from "../../../functions/fifo-worker/src/config.ts";
import { processorConfigSchema } from "../../../functions/processor/src/config.ts";
import { toolWorkerConfigSchema } from "../../../functions/tool-worker/src/config.ts";

interface ConfigSchema {
  readonly shape: Readonly<Record<string, unknown>>;
  safeParse(input: unknown): {
    success: boolean;
    error?: {
      readonly issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[];
    };
  };
}

const SCHEMAS: Record<FunctionKey, ConfigSchema> = {
  processor: processorConfigSchema,
  tool_worker: toolWorkerConfigSchema,
  fifo_worker: fifoWorkerConfigSchema,
  dlq_redrive: dlqRedriveConfigSchema,
};

const DLQ = "https://sqs.eu-west-1.amazonaws.com/123456789012/mcp-prod-queue-dlq";

async function declared(fn: FunctionKey, env: "dev" | "prod"): Promise<Record<string, string>> {
  const settings = await loadSettings(join(import.meta.dirname, "../../.."), env);
  const names = resourceNames(settings.name_prefix, { accountId: "123456789012" });
  return functionEnvironment(fn, {
    settings,
    names,
    ...(fn === "processor" ? {} : { deadLetterQueueUrl: DLQ }),
  });
}

describe("each function's config.ts reads its declared environment", () => {
  it.each(FUNCTION_KEYS.flatMap((fn) => (["dev", "prod"] as const).map((env) => [fn, env] as const)))(
    "%s (%s): it parses, and every variable set is one the function reads",
    async (fn, env) => {
      const environment = await declared(fn, env);
      const parsed = SCHEMAS[fn].safeParse(environment);
      expect(parsed.error?.issues ?? [], JSON.stringify(environment)).toEqual([]);
      for (const variable of Object.keys(environment))
        expect(Object.keys(SCHEMAS[fn].shape), `${fn} reads ${variable}`).toContain(variable);
    },
  );

  it.each(FUNCTION_KEYS)("%s: what an empty environment lacks is all declared", async (fn) => {
    const missing = new Set((SCHEMAS[fn].safeParse({}).error?.issues ?? []).map((i) => String(i.path[0])));
    expect(missing.size, "an empty environment is refused").toBeGreaterThan(0);
    expect(Object.keys(await declared(fn, "dev"))).toEqual(expect.arrayContaining([...missing]));
  });
});
