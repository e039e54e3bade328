import { type ConfigSchema, loadConfig, sqsQueueUrlSchema, streamNameSchema } from "@mcp-pipeline/aws";
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  isPlainBaseUrl,
  MAX_RESPONSE_BYTES_LIMIT,
  PLAIN_BASE_URL_MESSAGE,
} from "@mcp-pipeline/tools";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { MAX_INLINE_RESULT_BYTES } from "../src/config.js";

/**
 * The zod schema the worker's configuration (src/config.ts) replaced, as it was: the reference its
 * hand-written field rules are held to (config.test.ts), and, with the tools' settings, the reference of
 * each worker function's whole environment (workerFunctionConfigSuite).
 */
export const workerReference = z.object({
  TOOL_CALLS_TABLE: z.string().min(3).max(255),
  DEDUPE_TABLE: z.string().min(3).max(255),
  RESULTS_BUCKET: z.string().min(3).max(63),
  EVENTS_STREAM_NAME: streamNameSchema,
  DEAD_LETTER_QUEUE_URL: sqsQueueUrlSchema,
  MAX_RECEIVE_COUNT: z.coerce.number().int().min(1).max(1000).optional(),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(10),
  DEADLINE_MARGIN_MS: z.coerce.number().int().min(0).max(900_000).default(5_000),
  RETRY_BACKOFF_BASE_MS: z.coerce.number().int().min(1).max(43_200_000).default(5_000),
  RETRY_BACKOFF_MAX_MS: z.coerce.number().int().min(1).max(43_200_000).default(30_000),
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
});

/** A worker function's whole environment as zod declared it: the worker's settings and the tools'. */
export const workerFunctionReference = workerReference.extend({
  HTTP_TOOL_BASE_URL: z
    .url({ protocol: /^https?$/ })
    .refine(isPlainBaseUrl, PLAIN_BASE_URL_MESSAGE)
    .optional(),
  HTTP_TOOL_TIMEOUT_MS: z.coerce.number().int().min(1).max(900_000).default(5_000),
  HTTP_TOOL_MAX_RESPONSE_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_RESPONSE_BYTES_LIMIT)
    .default(DEFAULT_MAX_RESPONSE_BYTES),
  TEST_TOOLS: z
    .string()
    .regex(/^(on|off)$/, "expected on or off")
    .default("off"),
});

export type Parser = { safeParse(input: unknown): { success: boolean; data?: unknown; error?: unknown } };
type Failure = { issues: readonly { path: readonly PropertyKey[]; message: string }[] };

/** A parse's verdict and value, or its problems as ConfigError lists them (sorted). */
export function outcome(schema: Parser, env: Record<string, string | undefined>) {
  const parsed = schema.safeParse(env);
  if (parsed.success) return { success: true, data: parsed.data };
  const problems = (parsed.error as Failure).issues.map(
    (i) => `${i.path.map(String).join(".")}: ${i.message}`,
  );
  return { success: false, problems: problems.sort() };
}

export const good = {
  TOOL_CALLS_TABLE: "tool-calls",
  DEDUPE_TABLE: "dedupe",
  RESULTS_BUCKET: "results",
  EVENTS_STREAM_NAME: "events",
  DEAD_LETTER_QUEUE_URL: "http://sqs.us-east-1.127.0.0.1:4566/000000000000/jobs-dlq",
};

const functionCases: [string, Record<string, string | undefined>][] = [
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
      HTTP_TOOL_MAX_RESPONSE_BYTES: "10485760",
      TEST_TOOLS: "on",
    },
  ],
  ["nothing", {}],
  ["a base URL that is not a URL", { ...good, HTTP_TOOL_BASE_URL: "not a url" }],
  ["an FTP base URL", { ...good, HTTP_TOOL_BASE_URL: "ftp://files.example" }],
  ["a base URL without //", { ...good, HTTP_TOOL_BASE_URL: "http:example.com" }],
  ["an empty base URL", { ...good, HTTP_TOOL_BASE_URL: "" }],
  ["a tool timeout of 0", { ...good, HTTP_TOOL_TIMEOUT_MS: "0" }],
  ["a base URL with credentials", { ...good, HTTP_TOOL_BASE_URL: "https://u:p@api.example.com/v1" }],
  ["a base URL with a query", { ...good, HTTP_TOOL_BASE_URL: "https://api.example.com/v1?k=1" }],
  ["a base URL with a fragment", { ...good, HTTP_TOOL_BASE_URL: "https://api.example.com/v1#x" }],
  ["a response cap of 0", { ...good, HTTP_TOOL_MAX_RESPONSE_BYTES: "0" }],
  ["a response cap over 10 MiB", { ...good, HTTP_TOOL_MAX_RESPONSE_BYTES: "10485761" }],
  ["test tools neither on nor off", { ...good, TEST_TOOLS: "yes" }],
  ["test tools off", { ...good, TEST_TOOLS: "off" }],
  [
    "several bad settings at once, of both parts",
    { ...good, RESULTS_BUCKET: "", WORKER_CONCURRENCY: "0", HTTP_TOOL_BASE_URL: "x" },
  ],
];

/**
 * A worker function's environment (functions/<worker>/src/config.ts: the worker's settings and the
 * tools') against the zod schema it replaced: the same values or the same problems, so that no setting
 * of either part is lost or read differently when they are put together.
 */
export function workerFunctionConfigSuite(
  name: string,
  schema: ConfigSchema<unknown> & { readonly shape: object },
): void {
  describe(`${name}'s configuration against the zod schema it replaced`, () => {
    it.each(functionCases)("%s: the same values or the same problems", (_label, env) => {
      expect(outcome(schema, env)).toEqual(outcome(workerFunctionReference, env));
    });

    it("declares exactly the worker's settings and the tools'", () => {
      expect(Object.keys(schema.shape).sort()).toEqual(Object.keys(workerFunctionReference.shape).sort());
    });

    it("a bad setting is a ConfigError naming the variable", () => {
      expect(() => loadConfig(schema, { ...good, HTTP_TOOL_TIMEOUT_MS: "0" })).toThrow(
        expect.objectContaining({
          name: "ConfigError",
          problems: ["HTTP_TOOL_TIMEOUT_MS: Too small: expected number to be >=1"],
        }),
      );
    });
  });
}
