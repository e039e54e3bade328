import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  type DecodeResult,
  decodeLifecycleEvent,
  decodeToolCallJob,
  EncodeError,
  encodeLifecycleEvent,
  encodeToolCallJob,
  lifecycleEventSchema,
  SchemaViolationError,
  toolCallJobSchema,
  UnsupportedVersionError,
} from "../src/index.js";
import { SUPPORTED_SPEC_VERSIONS, specVersionSchema } from "../src/schema-common.js";
import { validateLifecycleEvent, validateToolCallJob } from "../src/validators.js";
import { b64, job, requested } from "./fixtures.js";

/**
 * The decoders run hand-written validators (src/validators.ts) instead of the zod schemas, for load
 * time (docs/benchmarks/cold-start.md). The schemas stay the definition: this file runs every case of
 * the bad-input tables (functions/processor/README.md "What happens to bad input", docs/tool-workers.md) and generated
 * near-misses through both, and requires the same verdict, error class, field paths and messages,
 * and on success the same value (unknown fields dropped).
 */

/** What decode.ts did with the zod schema before validators.ts: the reference. */
function zodValidate(value: unknown, schema: z.ZodType): DecodeResult<unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      ok: false,
      error: new SchemaViolationError([{ path: "(root)", message: "expected a JSON object" }]),
    };
  }
  const version = (value as { specVersion?: unknown }).specVersion;
  if (version === undefined) {
    return { ok: false, error: new SchemaViolationError([{ path: "specVersion", message: "required" }]) };
  }
  if (!specVersionSchema.safeParse(version).success) {
    return { ok: false, error: new UnsupportedVersionError(version, SUPPORTED_SPEC_VERSIONS) };
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    return {
      ok: false,
      error: new SchemaViolationError(
        parsed.error.issues.map((issue) => ({
          path: issue.path.length === 0 ? "(root)" : issue.path.map(String).join("."),
          message: issue.message,
        })),
      ),
    };
  }
  return { ok: true, value: parsed.data };
}

/** The comparable outcome: verdict, value, error class, code, and (sorted) issues. */
function outcome(result: DecodeResult<unknown>) {
  if (result.ok) return { ok: true, value: result.value };
  const issues =
    result.error instanceof SchemaViolationError
      ? [...result.error.issues].sort((a, b) =>
          `${a.path} ${a.message}`.localeCompare(`${b.path} ${b.message}`),
        )
      : [];
  return { ok: false, error: result.error.name, code: result.error.code, issues };
}

function expectSameAsSchema(kind: "event" | "job", value: unknown): void {
  const text = JSON.stringify(value);
  const decoded = kind === "event" ? decodeLifecycleEvent(b64(text)) : decodeToolCallJob(text);
  const reference = zodValidate(
    JSON.parse(text),
    kind === "event" ? lifecycleEventSchema : toolCallJobSchema,
  );
  expect(outcome(decoded)).toEqual(outcome(reference));
}

const completed = {
  ...requested,
  type: "tool_call.completed",
  argumentsDigest: undefined,
  durationMs: 12,
  result: { sizeBytes: 10, summary: "ok", location: { kind: "s3", bucket: "results", key: "k" } },
};
const failed = {
  ...requested,
  type: "tool_call.failed",
  argumentsDigest: undefined,
  durationMs: 3,
  error: { code: "timeout", message: "too slow", retryable: true },
};
const started = { ...requested, type: "tool_call.started", argumentsDigest: undefined, attempt: 2 };

/** functions/processor/README.md "What happens to bad input": the schema rows, one case per way to break a field. */
const eventCases: [string, unknown][] = [
  ["a JSON array", []],
  ["a JSON string", "x"],
  ["null", null],
  ["a missing specVersion", { ...requested, specVersion: undefined }],
  ["a new major version", { ...requested, specVersion: "2.0" }],
  ["a numeric specVersion", { ...requested, specVersion: 1 }],
  ["a malformed specVersion", { ...requested, specVersion: "v1" }],
  ["a newer minor with unknown fields", { ...requested, specVersion: "1.3", region: "eu" }],
  ["an unknown type", { ...requested, type: "tool_call.paused" }],
  ["a missing type", { ...requested, type: undefined }],
  ["a numeric type", { ...requested, type: 3 }],
  ["a missing callId", { ...requested, callId: undefined }],
  ["an empty callId", { ...requested, callId: "" }],
  ["a callId of 129 characters", { ...requested, callId: "c".repeat(129) }],
  ["a numeric eventId", { ...requested, eventId: 7 }],
  ["a timestamp with an offset", { ...requested, occurredAt: "2026-11-30T10:00:00+01:00" }],
  ["a timestamp without milliseconds", { ...requested, occurredAt: "2026-11-30T10:00:00Z" }],
  ["February 30th", { ...requested, occurredAt: "2026-02-30T10:00:00.000Z" }],
  ["February 29th of a common year", { ...requested, occurredAt: "2026-02-29T10:00:00.000Z" }],
  ["February 29th of a leap year", { ...requested, occurredAt: "2028-02-29T10:00:00.000Z" }],
  ["an uppercase digest", { ...requested, argumentsDigest: "A".repeat(64) }],
  ["a short digest", { ...requested, argumentsDigest: "a".repeat(63) }],
  ["a session id longer than a partition key", { ...requested, sessionId: "s".repeat(257) }],
  ["a tool name with spaces", { ...requested, tool: "web search" }],
  ["several bad fields at once", { ...requested, callId: "", tool: "a b", occurredAt: "now" }],
  ["a started event", started],
  ["attempt 0", { ...started, attempt: 0 }],
  ["a fractional attempt", { ...started, attempt: 1.5 }],
  ["an attempt beyond the safe integers", { ...started, attempt: 2 ** 60 }],
  ["a string attempt", { ...started, attempt: "1" }],
  ["a completed event", completed],
  ["a negative duration", { ...completed, durationMs: -1 }],
  ["a result that is not an object", { ...completed, result: [] }],
  ["a missing result", { ...completed, result: undefined }],
  [
    "a summary over 1024 characters",
    { ...completed, result: { ...completed.result, summary: "s".repeat(1025) } },
  ],
  [
    "an unknown result location",
    { ...completed, result: { ...completed.result, location: { kind: "ftp" } } },
  ],
  ["a location without kind", { ...completed, result: { ...completed.result, location: {} } }],
  [
    "a short bucket name",
    { ...completed, result: { ...completed.result, location: { kind: "s3", bucket: "b", key: "" } } },
  ],
  [
    "an inline result with extra fields",
    { ...completed, result: { ...completed.result, location: { kind: "inline", bucket: "x" } } },
  ],
  ["a failed event", failed],
  ["a string retryable", { ...failed, error: { ...failed.error, retryable: "yes" } }],
  ["an empty error code", { ...failed, error: { ...failed.error, code: "" } }],
  ["a null error", { ...failed, error: null }],
];

/** docs/tool-workers.md "What happens to bad input": the job schema rows. */
const jobCases: [string, unknown][] = [
  ["a valid job", job],
  ["a job with a deadline", { ...job, deadline: "2026-11-30T10:05:00.000Z" }],
  ["arguments that are not an object", { ...job, arguments: [1, 2] }],
  ["null arguments", { ...job, arguments: null }],
  ["missing arguments", { ...job, arguments: undefined }],
  ["a bad deadline", { ...job, deadline: "tomorrow" }],
  ["a null deadline", { ...job, deadline: null }],
  ["a v2 job", { ...job, specVersion: "2.0" }],
  ["a job without specVersion", { ...job, specVersion: undefined }],
  ["an unknown tool name format", { ...job, tool: "" }],
  ["a missing enqueuedAt", { ...job, enqueuedAt: undefined }],
  ["extra fields", { ...job, priority: "high" }],
  ["a JSON array", [job]],
];

describe("the hand-written validators decide as the zod schemas do", () => {
  it.each(eventCases)("lifecycle event: %s", (_name, value) => expectSameAsSchema("event", value));

  it.each(jobCases)("tool-call job: %s", (_name, value) => expectSameAsSchema("job", value));

  it("every malformed case is rejected (none of the table slips through)", () => {
    const accepted = new Set([
      "a newer minor with unknown fields",
      "February 29th of a leap year",
      "a started event",
      "a completed event",
      "an inline result with extra fields",
      "a failed event",
      "a valid job",
      "a job with a deadline",
      "extra fields",
    ]);
    for (const [name, value] of eventCases) {
      expect(decodeLifecycleEvent(b64(JSON.stringify(value))).ok, name).toBe(accepted.has(name));
    }
    for (const [name, value] of jobCases) {
      expect(decodeToolCallJob(JSON.stringify(value)).ok, name).toBe(accepted.has(name));
    }
  });

  const tricky = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom("", "x", "1.0", "2.0", "a".repeat(64), "s".repeat(300), "inline", "s3"),
    fc.constantFrom(-1, 0, 1, 1.5, 2 ** 53, -(2 ** 60), 1024, 1025),
    fc.constantFrom("2026-11-30T10:00:00.000Z", "2026-11-30T10:00:00Z", "2024-02-29T23:59:59.999Z"),
    // zod counts code points and checks the length of anything that has one.
    fc.constantFrom("😀".repeat(128), "😀".repeat(129), "😀".repeat(1024), "\ud800".repeat(2), "😀"),
    fc.constantFrom({ length: 0 }, { length: 5000 }, { length: "x" }, ["a"], [], { kind: "inline" }),
    fc.constant(undefined),
  );
  const paths = [
    ["specVersion"],
    ["eventId"],
    ["sessionId"],
    ["callId"],
    ["tool"],
    ["occurredAt"],
    ["type"],
    ["argumentsDigest"],
    ["attempt"],
    ["durationMs"],
    ["result"],
    ["result", "sizeBytes"],
    ["result", "summary"],
    ["result", "location"],
    ["result", "location", "kind"],
    ["result", "location", "bucket"],
    ["result", "location", "key"],
    ["error"],
    ["error", "code"],
    ["error", "message"],
    ["error", "retryable"],
    ["arguments"],
    ["enqueuedAt"],
    ["deadline"],
    ["unknownField"],
  ];

  /** A copy of `base` with `value` at `path` (undefined removes the field once serialised). */
  function mutate(base: unknown, path: readonly string[], value: unknown): unknown {
    const copy = structuredClone(base) as Record<string, unknown>;
    let at: Record<string, unknown> = copy;
    for (const key of path.slice(0, -1)) {
      const next = at[key];
      if (typeof next !== "object" || next === null || Array.isArray(next)) return copy;
      at = next as Record<string, unknown>;
    }
    at[path.at(-1) as string] = value;
    return copy;
  }

  it("agrees on generated near-misses of every event type and of jobs", () => {
    const bases = [requested, started, completed, failed, job];
    fc.assert(
      fc.property(
        fc.constantFrom(...bases.keys()),
        fc.array(fc.tuple(fc.constantFrom(...paths), tricky), { minLength: 1, maxLength: 3 }),
        (index, edits) => {
          let value: unknown = bases[index];
          for (const [path, v] of edits) value = mutate(value, path, v);
          expectSameAsSchema(index === 4 ? "job" : "event", value);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("agree on the validators' own entry points for values that are not objects", () => {
    for (const value of [null, 1, "x", [], true]) {
      expect(validateLifecycleEvent(value).ok).toBe(lifecycleEventSchema.safeParse(value).success);
      expect(validateToolCallJob(value).ok).toBe(toolCallJobSchema.safeParse(value).success);
    }
  });

  /** What encode.ts did with the zod schema before validators.ts: the reference (the text, or the issues). */
  function zodEncode(value: unknown, schema: z.ZodType) {
    const parsed = schema.safeParse(value);
    if (parsed.success) return { text: JSON.stringify(parsed.data) };
    return {
      error: "EncodeError",
      issues: parsed.error.issues
        .map((i) => `${i.path.length === 0 ? "(root)" : i.path.map(String).join(".")}: ${i.message}`)
        .sort(),
    };
  }

  function encoded(encode: (value: never) => string, value: unknown) {
    try {
      return { text: encode(value as never) };
    } catch (error) {
      if (!(error instanceof EncodeError)) throw error;
      // "invalid <what>: <path>: <message>; ..." (no message of these tables holds "; ")
      const issues = error.message.slice(error.message.indexOf(": ") + 2).split("; ");
      return { error: error.name, issues: issues.sort() };
    }
  }

  it.each(eventCases)("the event encoder refuses and writes as the zod schema does: %s", (_name, value) => {
    expect(encoded(encodeLifecycleEvent, value)).toEqual(zodEncode(value, lifecycleEventSchema));
  });

  it.each(jobCases)("the job encoder refuses and writes as the zod schema does: %s", (_name, value) => {
    expect(encoded(encodeToolCallJob, value)).toEqual(zodEncode(value, toolCallJobSchema));
  });
});
