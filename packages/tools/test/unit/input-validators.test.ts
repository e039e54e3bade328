import { type RegisteredTool, ToolRegistry } from "@mcp-pipeline/tools/registry";
import { compileWithAjv } from "@mcp-pipeline/tools/registry/ajv";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { allTools, inputValidators } from "../../src/index.js";

/**
 * The workers check tools' arguments with validators compiled at build time (src/input-validators.ts),
 * not with Ajv at start-up (docs/benchmarks/cold-start.md). Ajv's start-up compiler stays the reference:
 * every bad-arguments case of every tool, and generated near-misses, must get the same verdict, the same
 * error class and the same problems (JSON Pointer and message) from both.
 */

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const tools = allTools();
const compiled = new ToolRegistry(tools, inputValidators);
const reference = new ToolRegistry(tools, compileWithAjv());

async function outcome(registry: ToolRegistry, tool: string, args: unknown) {
  // Nothing runs: every call here either fails validation or is stopped by a deadline in the past.
  const error = await registry
    .invoke(
      {
        tool,
        arguments: args as Record<string, unknown>,
        callId: "c",
        sessionId: "s",
        attempt: 1,
        deadline: "2000-01-01T00:00:00.000Z",
      },
      { logger: silent },
    )
    .catch((e: unknown) => e);
  const { name, problems } = error as { name: string; problems?: unknown };
  return { name, problems };
}

/** docs/tool-workers.md "What happens to bad input": invalid arguments, one case per way to break a field. */
const cases: [string, string, unknown][] = [
  ["text.stats", "no arguments", {}],
  ["text.stats", "a number for text", { text: 7 }],
  ["text.stats", "null text", { text: null }],
  ["text.stats", "text over 100,000 characters", { text: "x".repeat(100_001) }],
  [
    "text.stats",
    "100,001 emoji (counted in code points, as the valid 100,000 below)",
    { text: "🙂".repeat(100_001) },
  ],
  ["text.stats", "an unexpected property", { text: "a", lang: "en" }],
  ["text.stats", "arguments that are an array", ["text"]],
  ["text.stats", "arguments that are a string", "text"],
  ["text.stats", "arguments that are null", null],
  ["load.latency", "no latencyMs", { resultBytes: 1 }],
  ["load.latency", "a fractional latencyMs", { latencyMs: 1.5 }],
  ["load.latency", "a negative latencyMs", { latencyMs: -1 }],
  ["load.latency", "a latencyMs over a minute", { latencyMs: 60_001 }],
  ["load.latency", "a string latencyMs", { latencyMs: "5" }],
  ["load.latency", "resultBytes over 2,000,000", { latencyMs: 0, resultBytes: 2_000_001 }],
  ["load.latency", "an unknown fail mode", { latencyMs: 0, fail: "sometimes" }],
  ["load.latency", "failUntilAttempt over 100", { latencyMs: 0, failUntilAttempt: 101 }],
  ["load.latency", "several bad fields at once", { latencyMs: "x", fail: 1, extra: true, more: 2 }],
  ["http.request", "no path", {}],
  ["http.request", "a path without a leading slash", { path: "http://elsewhere/" }],
  ["http.request", "a path with a space", { path: "/a b" }],
  ["http.request", "a path over 2,048 characters", { path: `/${"p".repeat(2048)}` }],
  ["http.request", "an unknown method", { path: "/", method: "DELETE" }],
  ["http.request", "a body that is an array", { path: "/", method: "POST", body: [] }],
  ["http.request", "a body that is a string", { path: "/", method: "POST", body: "{}" }],
  ["http.request", "a path of the wrong type and an unexpected property", { path: 1, host: "evil" }],
  ["no-such.tool", "an unknown tool", {}],
];

describe("build-time validators against Ajv's start-up compiler", () => {
  it("cover every tool of the catalogue", () => {
    expect(new Set(cases.map(([tool]) => tool))).toEqual(
      new Set([...tools.map((t) => t.name), "no-such.tool"]),
    );
  });

  it.each(cases)("%s with %s: the same error class and problems", async (tool, _label, args) => {
    const expected = await outcome(reference, tool, args);
    expect(expected.name).not.toBe("DeadlinePassedError");
    expect(await outcome(compiled, tool, args)).toEqual(expected);
  });

  it("valid arguments pass both (the call then stops at its deadline, before running)", async () => {
    for (const [tool, args] of [
      ["text.stats", { text: "🙂".repeat(100_000) }],
      ["load.latency", { latencyMs: 60_000, resultBytes: 0, fail: "permanent", failUntilAttempt: 100 }],
      ["http.request", { path: "/x?y=1", method: "POST", body: { a: 1 } }],
    ] as const) {
      expect(await outcome(compiled, tool, args)).toEqual({
        name: "DeadlinePassedError",
        problems: undefined,
      });
      expect(await outcome(reference, tool, args)).toEqual({
        name: "DeadlinePassedError",
        problems: undefined,
      });
    }
  });

  it("agree on generated arguments near each schema (verdict and every problem)", () => {
    const value = fc.oneof(
      fc.integer({ min: -2, max: 2_000_002 }),
      fc.double(),
      fc.string({ unit: "grapheme", maxLength: 12 }),
      fc.constantFrom("GET", "POST", "DELETE", "transient", "permanent", "/", "/a b", "/ok"),
      fc.constant(null),
      fc.boolean(),
      fc.array(fc.integer(), { maxLength: 2 }),
      fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
    );
    const keys = [
      "text",
      "latencyMs",
      "resultBytes",
      "fail",
      "failUntilAttempt",
      "path",
      "method",
      "body",
      "x",
    ];
    const args = fc.oneof(fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: 5 }), value);
    const ajv = compileWithAjv();
    fc.assert(
      fc.property(fc.constantFrom(...tools), args, (tool: RegisteredTool, input) => {
        const fast = inputValidators(tool);
        const slow = ajv(tool);
        expect(fast(input)).toBe(slow(input));
        expect(fast.errors ?? null).toEqual(slow.errors ?? null);
      }),
      { numRuns: 2_000 },
    );
  });
});
