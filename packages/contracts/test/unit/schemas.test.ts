import { describe, expect, it } from "vitest";
import {
  type DecodeResult,
  decodeLifecycleEvent,
  decodeToolCallJob,
  EncodeError,
  encodeLifecycleEvent,
  encodeToolCallJob,
  SchemaViolationError,
} from "../../src/index.js";
import { b64, job, requested } from "../fixtures.js";

/**
 * What the decoders and encoders make of every row of the bad-input tables (functions/processor/README.md
 * "What happens to bad input", docs/tool-workers.md): the verdict, the error's class and code, and each
 * issue's path and message, as the quarantine reason and the DLQ attributes store them. The snapshot
 * (__snapshots__/schemas.test.ts.snap) was written by the decoders as they were when the schemas were
 * declared twice (zod, and hand-written rules held to zod), so a change of wording or path shows here.
 */

/** The comparable outcome: verdict, value, error class, code, and issues as the error lists them. */
function outcome(result: DecodeResult<unknown>) {
  if (result.ok) return { ok: true, value: result.value };
  const issues = result.error instanceof SchemaViolationError ? result.error.issues : [];
  return {
    ok: false,
    error: result.error.name,
    code: result.error.code,
    message: result.error.message,
    issues,
  };
}

function encoded(encode: (value: never) => string, value: unknown) {
  try {
    return { text: encode(value as never) };
  } catch (error) {
    if (!(error instanceof EncodeError)) throw error;
    return { error: error.name, message: error.message };
  }
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

const decodeEvent = (value: unknown) => outcome(decodeLifecycleEvent(b64(JSON.stringify(value))));
const decodeJob = (value: unknown) => outcome(decodeToolCallJob(JSON.stringify(value)));

describe("the schemas on the bad-input tables", () => {
  it.each(eventCases)("lifecycle event: %s", (_name, value) => {
    expect({ decoded: decodeEvent(value), encoded: encoded(encodeLifecycleEvent, value) }).toMatchSnapshot();
  });

  it.each(jobCases)("tool-call job: %s", (_name, value) => {
    expect({ decoded: decodeJob(value), encoded: encoded(encodeToolCallJob, value) }).toMatchSnapshot();
  });

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
    for (const [name, value] of eventCases) expect(decodeEvent(value).ok, name).toBe(accepted.has(name));
    for (const [name, value] of jobCases) expect(decodeJob(value).ok, name).toBe(accepted.has(name));
  });
});
