import { loadConfig } from "@mcp-pipeline/aws";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { workerConfigSchema } from "../../src/index.js";
import { good, outcome, workerReference as reference } from "../config-reference.js";

/**
 * src/config.ts declares the worker's part of a worker function's environment with hand-written field
 * rules, not zod, for load time (docs/benchmarks/cold-start.md). The zod schema it replaced
 * (config-reference.ts) is the reference: every case of the bad-settings table and generated
 * environments must give the same verdict and value, and the same problems (variable and message, which
 * ConfigError lists). The functions add the tools' settings (workerFunctionConfigSuite).
 */
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
      RETRY_BACKOFF_BASE_MS: "2000",
      RETRY_BACKOFF_MAX_MS: "60000",
    },
  ],
  ["nothing", {}],
  ["a short table name", { ...good, DEDUPE_TABLE: "dd" }],
  ["a bucket name of 64 characters", { ...good, RESULTS_BUCKET: "b".repeat(64) }],
  ["a stream name with a space", { ...good, EVENTS_STREAM_NAME: "my events" }],
  ["a stream name of 129 characters", { ...good, EVENTS_STREAM_NAME: "s".repeat(129) }],
  ["a queue name instead of a URL", { ...good, DEAD_LETTER_QUEUE_URL: "jobs-dlq" }],
  [
    "a queue URL without an account",
    { ...good, DEAD_LETTER_QUEUE_URL: "https://sqs.eu-west-1.amazonaws.com/jobs" },
  ],
  ["a FIFO queue URL", { ...good, DEAD_LETTER_QUEUE_URL: `${good.DEAD_LETTER_QUEUE_URL}.fifo` }],
  ["maxReceiveCount 0", { ...good, MAX_RECEIVE_COUNT: "0" }],
  ["maxReceiveCount 1001", { ...good, MAX_RECEIVE_COUNT: "1001" }],
  ["an empty maxReceiveCount (Number('') is 0)", { ...good, MAX_RECEIVE_COUNT: "" }],
  ["concurrency 257", { ...good, WORKER_CONCURRENCY: "257" }],
  ["a word for concurrency", { ...good, WORKER_CONCURRENCY: "ten" }],
  ["a retention under a minute", { ...good, IDEMPOTENCY_RETENTION_SECONDS: "59" }],
  ["an inline limit over DynamoDB's room", { ...good, RESULT_INLINE_MAX_BYTES: "350001" }],
  ["a fractional inline limit", { ...good, RESULT_INLINE_MAX_BYTES: "1024.5" }],
  ["a backoff base of 0", { ...good, RETRY_BACKOFF_BASE_MS: "0" }],
  ["a backoff ceiling past 12 hours", { ...good, RETRY_BACKOFF_MAX_MS: "43200001" }],
  ["a backoff in words", { ...good, RETRY_BACKOFF_MAX_MS: "two minutes" }],
  ["several bad settings at once", { ...good, RESULTS_BUCKET: "", WORKER_CONCURRENCY: "0" }],
];

describe("a worker's configuration against the zod schema it replaced", () => {
  it.each(cases)("%s: the same values or the same problems", (_label, env) => {
    expect(outcome(workerConfigSchema, env)).toEqual(outcome(reference, env));
  });

  it("agrees on generated environments", () => {
    const setting = fc.option(
      fc.oneof(
        fc.constantFrom(
          "",
          "0",
          "1",
          "59",
          "60",
          "256",
          "1000",
          "1001",
          "350000",
          "350001",
          "1.5",
          "1e3",
          "x",
        ),
        fc.constantFrom("events", "a.b-c_1", good.DEAD_LETTER_QUEUE_URL, "https://example.com", "ftp://x"),
        fc.integer({ min: -10, max: 2_000_000 }).map(String),
        fc.string({ maxLength: 140 }),
      ),
      { nil: undefined },
    );
    const env = fc.record(Object.fromEntries(Object.keys(reference.shape).map((key) => [key, setting])), {
      requiredKeys: [],
    });
    fc.assert(
      fc.property(env, (e) => {
        expect(outcome(workerConfigSchema, e)).toEqual(outcome(reference, e));
      }),
      { numRuns: 2_000 },
    );
  });

  it("a bad setting is a ConfigError naming the variable", () => {
    const error = (() => {
      try {
        loadConfig(workerConfigSchema, { ...good, WORKER_CONCURRENCY: "0" });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toMatchObject({
      name: "ConfigError",
      problems: ["WORKER_CONCURRENCY: Too small: expected number to be >=1"],
    });
  });
});
