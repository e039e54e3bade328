import { type ConfigSchema, loadConfig } from "@mcp-pipeline/aws";
import { describe, expect, it } from "vitest";

/**
 * A worker function's environment judged by what it does: the values a good environment gives (defaults
 * included) and, for each bad setting, the problems ConfigError lists (variable and message, sorted), which
 * are what an operator reads when a function refuses to start. The worker's part is checked by
 * test/unit/config.test.ts, each worker function's whole environment (the worker's settings and the
 * tools') by workerFunctionConfigSuite.
 */

type Env = Record<string, string | undefined>;

export const good = {
  TOOL_CALLS_TABLE: "tool-calls",
  DEDUPE_TABLE: "dedupe",
  RESULTS_BUCKET: "results",
  EVENTS_STREAM_NAME: "events",
  DEAD_LETTER_QUEUE_URL: "http://sqs.us-east-1.127.0.0.1:4566/000000000000/jobs-dlq",
};

/** What the worker's part reads from `good` alone: the required values and every default. */
export const workerDefaults = {
  ...good,
  WORKER_CONCURRENCY: 10,
  DEADLINE_MARGIN_MS: 5_000,
  RETRY_BACKOFF_BASE_MS: 5_000,
  RETRY_BACKOFF_MAX_MS: 30_000,
  SDK_RETRY_BASE_MS: 50,
  SDK_THROTTLE_RETRY_BASE_MS: 1_000,
  IDEMPOTENCY_RETENTION_SECONDS: 14 * 24 * 3600,
  RESULT_INLINE_MAX_BYTES: 256 * 1024,
};

/** Every setting of the worker's part given, and what the worker reads from them. */
export const workerEverySetting = {
  env: {
    ...good,
    MAX_RECEIVE_COUNT: "5",
    WORKER_CONCURRENCY: "20",
    DEADLINE_MARGIN_MS: "1000",
    RETRY_BACKOFF_BASE_MS: "2000",
    RETRY_BACKOFF_MAX_MS: "60000",
    SDK_RETRY_BASE_MS: "5",
    SDK_THROTTLE_RETRY_BASE_MS: "100",
    IDEMPOTENCY_RETENTION_SECONDS: "60",
    RESULT_INLINE_MAX_BYTES: "350000",
  },
  read: {
    ...good,
    MAX_RECEIVE_COUNT: 5,
    WORKER_CONCURRENCY: 20,
    DEADLINE_MARGIN_MS: 1_000,
    RETRY_BACKOFF_BASE_MS: 2_000,
    RETRY_BACKOFF_MAX_MS: 60_000,
    SDK_RETRY_BASE_MS: 5,
    SDK_THROTTLE_RETRY_BASE_MS: 100,
    IDEMPOTENCY_RETENTION_SECONDS: 60,
    RESULT_INLINE_MAX_BYTES: 350_000,
  },
};

const missing = (name: string) => `${name}: Invalid input: expected string, received undefined`;

/** A bad environment of the worker's part, and the problems it gives. */
export const workerBadCases: [string, Env, string[]][] = [
  [
    "nothing",
    {},
    ["DEAD_LETTER_QUEUE_URL", "DEDUPE_TABLE", "EVENTS_STREAM_NAME", "RESULTS_BUCKET", "TOOL_CALLS_TABLE"].map(
      missing,
    ),
  ],
  [
    "a short table name",
    { ...good, DEDUPE_TABLE: "dd" },
    ["DEDUPE_TABLE: Too small: expected string to have >=3 characters"],
  ],
  [
    "a bucket name of 64 characters",
    { ...good, RESULTS_BUCKET: "b".repeat(64) },
    ["RESULTS_BUCKET: Too big: expected string to have <=63 characters"],
  ],
  [
    "a stream name with a space",
    { ...good, EVENTS_STREAM_NAME: "my events" },
    ["EVENTS_STREAM_NAME: expected a Kinesis stream name"],
  ],
  [
    "a stream name of 129 characters",
    { ...good, EVENTS_STREAM_NAME: "s".repeat(129) },
    ["EVENTS_STREAM_NAME: expected a Kinesis stream name"],
  ],
  [
    "a queue name instead of a URL",
    { ...good, DEAD_LETTER_QUEUE_URL: "jobs-dlq" },
    ["DEAD_LETTER_QUEUE_URL: expected an SQS queue URL"],
  ],
  [
    "a queue URL without an account",
    { ...good, DEAD_LETTER_QUEUE_URL: "https://sqs.eu-west-1.amazonaws.com/jobs" },
    ["DEAD_LETTER_QUEUE_URL: expected an SQS queue URL"],
  ],
  [
    "maxReceiveCount 0",
    { ...good, MAX_RECEIVE_COUNT: "0" },
    ["MAX_RECEIVE_COUNT: Too small: expected number to be >=1"],
  ],
  [
    "maxReceiveCount 1001",
    { ...good, MAX_RECEIVE_COUNT: "1001" },
    ["MAX_RECEIVE_COUNT: Too big: expected number to be <=1000"],
  ],
  [
    "an empty maxReceiveCount (Number('') is 0)",
    { ...good, MAX_RECEIVE_COUNT: "" },
    ["MAX_RECEIVE_COUNT: Too small: expected number to be >=1"],
  ],
  [
    "concurrency 257",
    { ...good, WORKER_CONCURRENCY: "257" },
    ["WORKER_CONCURRENCY: Too big: expected number to be <=256"],
  ],
  [
    "a word for concurrency",
    { ...good, WORKER_CONCURRENCY: "ten" },
    ["WORKER_CONCURRENCY: Invalid input: expected number, received NaN"],
  ],
  [
    "a retention under a minute",
    { ...good, IDEMPOTENCY_RETENTION_SECONDS: "59" },
    ["IDEMPOTENCY_RETENTION_SECONDS: Too small: expected number to be >=60"],
  ],
  [
    "an inline limit over DynamoDB's room",
    { ...good, RESULT_INLINE_MAX_BYTES: "350001" },
    ["RESULT_INLINE_MAX_BYTES: Too big: expected number to be <=350000"],
  ],
  [
    "a fractional inline limit",
    { ...good, RESULT_INLINE_MAX_BYTES: "1024.5" },
    ["RESULT_INLINE_MAX_BYTES: Invalid input: expected int, received number"],
  ],
  [
    "a backoff base of 0",
    { ...good, RETRY_BACKOFF_BASE_MS: "0" },
    ["RETRY_BACKOFF_BASE_MS: Too small: expected number to be >=1"],
  ],
  [
    "a backoff ceiling past 12 hours",
    { ...good, RETRY_BACKOFF_MAX_MS: "43200001" },
    ["RETRY_BACKOFF_MAX_MS: Too big: expected number to be <=43200000"],
  ],
  [
    "a backoff in words",
    { ...good, RETRY_BACKOFF_MAX_MS: "two minutes" },
    ["RETRY_BACKOFF_MAX_MS: Invalid input: expected number, received NaN"],
  ],
  [
    "an SDK retry base of 0",
    { ...good, SDK_RETRY_BASE_MS: "0" },
    ["SDK_RETRY_BASE_MS: Too small: expected number to be >=1"],
  ],
  [
    "an SDK throttling retry base past the SDK's 20 s cap",
    { ...good, SDK_THROTTLE_RETRY_BASE_MS: "20001" },
    ["SDK_THROTTLE_RETRY_BASE_MS: Too big: expected number to be <=20000"],
  ],
  [
    "an SDK retry base in words",
    { ...good, SDK_THROTTLE_RETRY_BASE_MS: "one second" },
    ["SDK_THROTTLE_RETRY_BASE_MS: Invalid input: expected number, received NaN"],
  ],
  [
    "a fractional SDK retry base",
    { ...good, SDK_RETRY_BASE_MS: "2.5" },
    ["SDK_RETRY_BASE_MS: Invalid input: expected int, received number"],
  ],
  [
    "several bad settings at once",
    { ...good, RESULTS_BUCKET: "", WORKER_CONCURRENCY: "0" },
    [
      "RESULTS_BUCKET: Too small: expected string to have >=3 characters",
      "WORKER_CONCURRENCY: Too small: expected number to be >=1",
    ],
  ],
];

const CREDENTIALS_QUERY_FRAGMENT =
  "HTTP_TOOL_BASE_URL: must not hold credentials, a query or a fragment (the tool appends each job's path to it)";

/** A bad environment of the tools' part of a worker function, and the problems it gives. */
const toolsBadCases: [string, Env, string[]][] = [
  [
    "a base URL that is not a URL",
    { ...good, HTTP_TOOL_BASE_URL: "not a url" },
    ["HTTP_TOOL_BASE_URL: Invalid URL"],
  ],
  [
    "an FTP base URL",
    { ...good, HTTP_TOOL_BASE_URL: "ftp://files.example" },
    ["HTTP_TOOL_BASE_URL: Invalid URL"],
  ],
  [
    "a base URL without //",
    { ...good, HTTP_TOOL_BASE_URL: "http:example.com" },
    ["HTTP_TOOL_BASE_URL: Invalid URL"],
  ],
  ["an empty base URL", { ...good, HTTP_TOOL_BASE_URL: "" }, ["HTTP_TOOL_BASE_URL: Invalid URL"]],
  [
    "a tool timeout of 0",
    { ...good, HTTP_TOOL_TIMEOUT_MS: "0" },
    ["HTTP_TOOL_TIMEOUT_MS: Too small: expected number to be >=1"],
  ],
  [
    "a base URL with credentials",
    { ...good, HTTP_TOOL_BASE_URL: "https://u:p@api.example.com/v1" },
    [CREDENTIALS_QUERY_FRAGMENT],
  ],
  [
    "a base URL with a query",
    { ...good, HTTP_TOOL_BASE_URL: "https://api.example.com/v1?k=1" },
    [CREDENTIALS_QUERY_FRAGMENT],
  ],
  [
    "a base URL with a fragment",
    { ...good, HTTP_TOOL_BASE_URL: "https://api.example.com/v1#x" },
    [CREDENTIALS_QUERY_FRAGMENT],
  ],
  [
    "a response cap of 0",
    { ...good, HTTP_TOOL_MAX_RESPONSE_BYTES: "0" },
    ["HTTP_TOOL_MAX_RESPONSE_BYTES: Too small: expected number to be >=1"],
  ],
  [
    "a response cap over 10 MiB",
    { ...good, HTTP_TOOL_MAX_RESPONSE_BYTES: "10485761" },
    ["HTTP_TOOL_MAX_RESPONSE_BYTES: Too big: expected number to be <=10485760"],
  ],
  ["test tools neither on nor off", { ...good, TEST_TOOLS: "yes" }, ["TEST_TOOLS: expected on or off"]],
  [
    "several bad settings at once, of both parts",
    { ...good, RESULTS_BUCKET: "", WORKER_CONCURRENCY: "0", HTTP_TOOL_BASE_URL: "x" },
    [
      "HTTP_TOOL_BASE_URL: Invalid URL",
      "RESULTS_BUCKET: Too small: expected string to have >=3 characters",
      "WORKER_CONCURRENCY: Too small: expected number to be >=1",
    ],
  ],
];

/** The problems loadConfig throws for `env`, as ConfigError lists them, sorted; `[]` when it loads. */
export function problemsOf(schema: ConfigSchema<unknown>, env: Env): string[] {
  try {
    loadConfig(schema, env);
    return [];
  } catch (error) {
    expect(error).toMatchObject({ name: "ConfigError" });
    return [...(error as { problems: readonly string[] }).problems].sort();
  }
}

/**
 * A worker function's environment (functions/<worker>/src/config.ts: the worker's settings and the
 * tools'): what it reads, and the problems of every bad setting of either part, so that no setting of
 * either part is lost or read differently when they are put together.
 */
export function workerFunctionConfigSuite(name: string, schema: ConfigSchema<unknown>): void {
  describe(`${name}'s configuration`, () => {
    it("reads the minimum with every default", () => {
      expect(loadConfig(schema, good)).toEqual({
        ...workerDefaults,
        HTTP_TOOL_TIMEOUT_MS: 5_000,
        HTTP_TOOL_MAX_RESPONSE_BYTES: 1024 * 1024,
        TEST_TOOLS: "off",
      });
    });

    it("reads every setting, the base URL trimmed", () => {
      const env = {
        ...workerEverySetting.env,
        HTTP_TOOL_BASE_URL: " https://api.example.com/v1 ",
        HTTP_TOOL_TIMEOUT_MS: "900000",
        HTTP_TOOL_MAX_RESPONSE_BYTES: "10485760",
        TEST_TOOLS: "on",
      };
      expect(loadConfig(schema, env)).toEqual({
        ...workerEverySetting.read,
        HTTP_TOOL_BASE_URL: "https://api.example.com/v1",
        HTTP_TOOL_TIMEOUT_MS: 900_000,
        HTTP_TOOL_MAX_RESPONSE_BYTES: 10 * 1024 * 1024,
        TEST_TOOLS: "on",
      });
    });

    it.each([...workerBadCases, ...toolsBadCases])(
      "refuses %s, naming each variable",
      (_label, env, problems) => {
        expect(problemsOf(schema, env)).toEqual(problems);
      },
    );
  });
}
