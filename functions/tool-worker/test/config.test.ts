import { loadConfig, sqsQueueUrlSchema, streamNameSchema } from "@mcp-pipeline/aws";
import { MAX_INLINE_RESULT_BYTES } from "@mcp-pipeline/worker/config";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { toolWorkerConfigSchema } from "../src/config.js";

/**
 * tool-worker's environment is the worker's settings and the tools' (each held to its zod reference in
 * packages/worker and packages/tools). Here, the whole of it against the zod schema it replaced: the
 * same values or the same problems (variable and message, which ConfigError lists), so that no setting
 * of either part is lost or read differently when they are put together.
 */
const reference = z.object({
  TOOL_CALLS_TABLE: z.string().min(3).max(255),
  DEDUPE_TABLE: z.string().min(3).max(255),
  RESULTS_BUCKET: z.string().min(3).max(63),
  EVENTS_STREAM_NAME: streamNameSchema,
  DEAD_LETTER_QUEUE_URL: sqsQueueUrlSchema,
  MAX_RECEIVE_COUNT: z.coerce.number().int().min(1).max(1000).optional(),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(10),
  DEADLINE_MARGIN_MS: z.coerce.number().int().min(0).max(900_000).default(5_000),
  IDEMPOTENCY_RETENTION_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .default(14 * 24 * 3600),
  RESULT_INLINE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_INLINE_RESULT_BYTES)
    .default(256 * 1024),
  HTTP_TOOL_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  HTTP_TOOL_TIMEOUT_MS: z.coerce.number().int().min(1).max(900_000).default(5_000),
});

type Parser = { safeParse(input: unknown): { success: boolean; data?: unknown; error?: unknown } };
type Failure = { issues: readonly { path: readonly PropertyKey[]; message: string }[] };

function outcome(schema: Parser, env: Record<string, string | undefined>) {
  const parsed = schema.safeParse(env);
  if (parsed.success) return { success: true, data: parsed.data };
  const problems = (parsed.error as Failure).issues.map(
    (i) => `${i.path.map(String).join(".")}: ${i.message}`,
  );
  return { success: false, problems: problems.sort() };
}

const good = {
  TOOL_CALLS_TABLE: "tool-calls",
  DEDUPE_TABLE: "dedupe",
  RESULTS_BUCKET: "results",
  EVENTS_STREAM_NAME: "events",
  DEAD_LETTER_QUEUE_URL: "http://sqs.us-east-1.127.0.0.1:4566/000000000000/jobs-dlq",
};

const cases: [string, Record<string, string | undefined>][] = [
  ["the minimum", good],
  [
    "every setting",
    {
      ...good,
      MAX_RECEIVE_COUNT: "5",
      WORKER_CONCURRENCY: "20",
      DEADLINE_MARGIN_MS: "1000",
      IDEMPOTENCY_RETENTION_SECONDS: "60",
      RESULT_INLINE_MAX_BYTES: "350000",
      HTTP_TOOL_BASE_URL: " https://api.example.com/v1 ",
      HTTP_TOOL_TIMEOUT_MS: "900000",
    },
  ],
  ["nothing", {}],
  ["a base URL that is not a URL", { ...good, HTTP_TOOL_BASE_URL: "not a url" }],
  ["an FTP base URL", { ...good, HTTP_TOOL_BASE_URL: "ftp://files.example" }],
  ["a base URL without //", { ...good, HTTP_TOOL_BASE_URL: "http:example.com" }],
  ["an empty base URL", { ...good, HTTP_TOOL_BASE_URL: "" }],
  ["a tool timeout of 0", { ...good, HTTP_TOOL_TIMEOUT_MS: "0" }],
  [
    "several bad settings at once, of both parts",
    { ...good, RESULTS_BUCKET: "", WORKER_CONCURRENCY: "0", HTTP_TOOL_BASE_URL: "x" },
  ],
];

describe("tool-worker's configuration against the zod schema it replaced", () => {
  it.each(cases)("%s: the same values or the same problems", (_label, env) => {
    expect(outcome(toolWorkerConfigSchema, env)).toEqual(outcome(reference, env));
  });

  it("declares exactly the worker's settings and the tools'", () => {
    expect(Object.keys(toolWorkerConfigSchema.shape).sort()).toEqual(Object.keys(reference.shape).sort());
  });

  it("a bad setting is a ConfigError naming the variable", () => {
    expect(() => loadConfig(toolWorkerConfigSchema, { ...good, HTTP_TOOL_TIMEOUT_MS: "0" })).toThrow(
      expect.objectContaining({
        name: "ConfigError",
        problems: ["HTTP_TOOL_TIMEOUT_MS: Too small: expected number to be >=1"],
      }),
    );
  });
});
