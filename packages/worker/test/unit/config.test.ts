import { loadConfig } from "@mcp-pipeline/aws";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { workerConfigSchema as workerConfigSchemaOf } from "../../src/index.js";
import { good, problemsOf, workerBadCases, workerDefaults, workerEverySetting } from "../config-cases.js";

/**
 * The worker's part of a worker function's environment (src/config.ts), judged by what it reads and by
 * the problems it lists for each bad setting (config-cases.ts); the functions add the tools' settings
 * (workerFunctionConfigSuite).
 */
// The worker part is the same for both worker functions; tool_worker's declaration gives its ranges.
const workerConfigSchema = workerConfigSchemaOf("tool_worker");

describe("a worker's configuration", () => {
  it("reads the minimum with every default", () => {
    expect(loadConfig(workerConfigSchema, good)).toEqual(workerDefaults);
  });

  it("reads every setting", () => {
    expect(loadConfig(workerConfigSchema, workerEverySetting.env)).toEqual(workerEverySetting.read);
  });

  it("takes a FIFO dead-letter queue's URL", () => {
    const url = `${good.DEAD_LETTER_QUEUE_URL}.fifo`;
    expect(loadConfig(workerConfigSchema, { ...good, DEAD_LETTER_QUEUE_URL: url })).toMatchObject({
      DEAD_LETTER_QUEUE_URL: url,
    });
  });

  it.each(workerBadCases)("refuses %s, naming each variable", (_label, env, problems) => {
    expect(problemsOf(workerConfigSchema, env)).toEqual(problems);
  });

  it("reads a generated environment whole or names each bad variable, never another", () => {
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
    const names = Object.keys(workerConfigSchema.shape);
    const env = fc.record(Object.fromEntries(names.map((key) => [key, setting])), { requiredKeys: [] });
    fc.assert(
      fc.property(env, (e) => {
        const problems = problemsOf(workerConfigSchema, e);
        for (const problem of problems) expect(names).toContain(problem.slice(0, problem.indexOf(":")));
        if (problems.length === 0)
          expect(Object.keys(loadConfig(workerConfigSchema, e))).toEqual(
            expect.arrayContaining(Object.keys(workerDefaults)),
          );
      }),
      { numRuns: 2_000 },
    );
  });
});
