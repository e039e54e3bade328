import { describe, expect, it } from "vitest";
import { processorConfigSchema } from "../../src/config.js";

/**
 * What the processor makes of each environment of the bad-settings table (src/config.ts, declared once with
 * light-schema): the values, or the problems ConfigError lists (variable and message). The snapshot
 * (__snapshots__/config.test.ts.snap) was written when a zod copy of the schema was the reference, and
 * matched it, so a changed range, default or message shows here.
 */
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

const good = { TOOL_CALLS_TABLE: "tool-calls", QUARANTINE_BUCKET: "quarantine" };

const cases: [string, Record<string, string | undefined>][] = [
  ["the minimum", good],
  [
    "every setting",
    { ...good, PROCESSOR_CONCURRENCY: "64", DEADLINE_MARGIN_MS: "0", DEDUPE_TABLE: "ignored" },
  ],
  ["nothing", {}],
  ["a short table name", { ...good, TOOL_CALLS_TABLE: "tc" }],
  ["a table name of 256 characters", { ...good, TOOL_CALLS_TABLE: "t".repeat(256) }],
  ["a bucket name of 64 characters", { ...good, QUARANTINE_BUCKET: "b".repeat(64) }],
  ["an empty bucket name", { ...good, QUARANTINE_BUCKET: "" }],
  ["concurrency 0", { ...good, PROCESSOR_CONCURRENCY: "0" }],
  ["concurrency 257", { ...good, PROCESSOR_CONCURRENCY: "257" }],
  ["a fractional concurrency", { ...good, PROCESSOR_CONCURRENCY: "1.5" }],
  ["a word for concurrency", { ...good, PROCESSOR_CONCURRENCY: "many" }],
  ["an empty concurrency (Number('') is 0)", { ...good, PROCESSOR_CONCURRENCY: "" }],
  ["concurrency in hex", { ...good, PROCESSOR_CONCURRENCY: "0x10" }],
  ["a negative margin", { ...good, DEADLINE_MARGIN_MS: "-1" }],
  ["a margin over 15 minutes", { ...good, DEADLINE_MARGIN_MS: "900001" }],
  ["an infinite margin", { ...good, DEADLINE_MARGIN_MS: "Infinity" }],
  ["a margin beyond the safe integers", { ...good, DEADLINE_MARGIN_MS: "1e300" }],
  ["SDK retry bases of 1 ms", { ...good, SDK_RETRY_BASE_MS: "1", SDK_THROTTLE_RETRY_BASE_MS: "1" }],
  ["an SDK retry base of 0", { ...good, SDK_RETRY_BASE_MS: "0" }],
  ["an SDK throttling retry base past 20 s", { ...good, SDK_THROTTLE_RETRY_BASE_MS: "20001" }],
  ["an SDK throttling retry base in words", { ...good, SDK_THROTTLE_RETRY_BASE_MS: "1s" }],
  [
    "several bad settings at once",
    { TOOL_CALLS_TABLE: "x", PROCESSOR_CONCURRENCY: "0", DEADLINE_MARGIN_MS: "soon" },
  ],
];

describe("the processor's configuration", () => {
  it.each(cases)("%s: its values or its problems", (_label, env) => {
    expect(outcome(processorConfigSchema, env)).toMatchSnapshot();
  });
});
