import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { en } from "zod/locales";
import * as z from "zod/mini";
import { processorConfigSchema } from "../src/config.js";

/**
 * src/config.ts declares the processor's environment with hand-written field rules, not zod, for load time
 * (docs/benchmarks/cold-start.md). The zod schema it replaced, below as it was, is the reference: every
 * case of the bad-settings table and generated environments must give the same verdict and value, and the
 * same problems (variable and message, which ConfigError lists).
 */
z.config(en());
const reference = z.object({
  TOOL_CALLS_TABLE: z.string().check(z.minLength(3), z.maxLength(255)),
  QUARANTINE_BUCKET: z.string().check(z.minLength(3), z.maxLength(63)),
  PROCESSOR_CONCURRENCY: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(256)), 16),
  DEADLINE_MARGIN_MS: z._default(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(900_000)), 5_000),
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
  [
    "several bad settings at once",
    { TOOL_CALLS_TABLE: "x", PROCESSOR_CONCURRENCY: "0", DEADLINE_MARGIN_MS: "soon" },
  ],
];

describe("the processor's configuration against the zod schema it replaced", () => {
  it.each(cases)("%s: the same values or the same problems", (_label, env) => {
    expect(outcome(processorConfigSchema, env)).toEqual(outcome(reference, env));
  });

  it("agrees on generated environments", () => {
    const setting = fc.option(
      fc.oneof(
        fc.constantFrom(
          "",
          "0",
          "1",
          "16",
          "256",
          "257",
          "-1",
          "1.5",
          "1e3",
          "900000",
          "900001",
          "abc",
          " 8 ",
        ),
        fc.integer({ min: -10, max: 1_000_000 }).map(String),
        fc.string({ maxLength: 300 }),
      ),
      { nil: undefined },
    );
    const env = fc.record(
      {
        TOOL_CALLS_TABLE: setting,
        QUARANTINE_BUCKET: setting,
        PROCESSOR_CONCURRENCY: setting,
        DEADLINE_MARGIN_MS: setting,
        OTHER: setting,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(env, (e) => {
        expect(outcome(processorConfigSchema, e)).toEqual(outcome(reference, e));
      }),
      { numRuns: 2_000 },
    );
  });
});
