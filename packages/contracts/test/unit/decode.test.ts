import { describe, expect, it } from "vitest";
import {
  BadEncodingError,
  BadJsonError,
  DecodeErrorCode,
  decodeLifecycleEvent,
  decodeLifecycleEventBytes,
  decodeToolCallJob,
  failureKindOf,
  SchemaViolationError,
  UnsupportedVersionError,
} from "../../src/index.js";
import { b64, job, requested } from "../fixtures.js";

describe("decodeLifecycleEvent: every malformed record has a typed, permanent error", () => {
  it("decodes a valid record", () => {
    expect(decodeLifecycleEvent(b64(JSON.stringify(requested)))).toEqual({ ok: true, value: requested });
  });

  it.each([
    ["characters outside the base64 alphabet", "not base64!"],
    ["a length that is not a multiple of 4", "YWJjZA="],
    ["misplaced padding", "YW=jZA=="],
  ])("rejects %s as bad-encoding", (_name, data) => {
    const result = decodeLifecycleEvent(data);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toBeInstanceOf(BadEncodingError);
      expect(result.error.code).toBe(DecodeErrorCode.BadEncoding);
    }
  });

  it("rejects bytes that are not UTF-8 as bad-encoding", () => {
    const result = decodeLifecycleEventBytes(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]));
    expect(!result.ok && result.error.code).toBe("bad-encoding");
  });

  it.each([
    ["truncated JSON", '{"specVersion":"1.0",'],
    ["plain text", "hello"],
    ["an empty payload", ""],
  ])("rejects %s as bad-json", (_name, text) => {
    const result = decodeLifecycleEvent(b64(text));
    expect(!result.ok && result.error).toBeInstanceOf(BadJsonError);
  });

  it.each([
    ["a JSON array", "[]", "(root)"],
    ["a JSON string", '"x"', "(root)"],
    ["null", "null", "(root)"],
    ["a missing specVersion", JSON.stringify({ ...requested, specVersion: undefined }), "specVersion"],
    ["an unknown type", JSON.stringify({ ...requested, type: "tool_call.paused" }), "type"],
    ["a missing callId", JSON.stringify({ ...requested, callId: undefined }), "callId"],
    [
      "a timestamp with an offset",
      JSON.stringify({ ...requested, occurredAt: "2026-11-30T10:00:00+01:00" }),
      "occurredAt",
    ],
    [
      "an uppercase digest",
      JSON.stringify({ ...requested, argumentsDigest: "A".repeat(64) }),
      "argumentsDigest",
    ],
    [
      "a session id longer than a partition key",
      JSON.stringify({ ...requested, sessionId: "s".repeat(257) }),
      "sessionId",
    ],
    ["a tool name with spaces", JSON.stringify({ ...requested, tool: "web search" }), "tool"],
  ])("rejects %s as schema-violation naming the field", (_name, text, path) => {
    const result = decodeLifecycleEvent(b64(text));
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toBeInstanceOf(SchemaViolationError);
      expect((result.error as SchemaViolationError).issues.map((i) => i.path)).toContain(path);
    }
  });

  it.each([
    ["a new major version", "2.0", '"2.0"'],
    ["a number instead of a string", 1, "(a number)"],
    // Only a version-shaped string is repeated: the field comes from the payload (redact.ts).
    ["a malformed version", "v1", "(a string of 2 characters)"],
  ])("rejects %s as unsupported-version, before looking at the rest", (_name, version, shown) => {
    const result = decodeLifecycleEvent(b64(JSON.stringify({ specVersion: version, anything: true })));
    expect(!result.ok && result.error).toBeInstanceOf(UnsupportedVersionError);
    if (!result.ok) expect((result.error as UnsupportedVersionError).version).toBe(shown);
  });

  it("reads a newer minor version and ignores fields it does not know", () => {
    const result = decodeLifecycleEvent(
      b64(JSON.stringify({ ...requested, specVersion: "1.3", region: "eu" })),
    );
    expect(result).toEqual({ ok: true, value: { ...requested, specVersion: "1.3" } });
  });

  it.each([
    ["10,000 nested objects", `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`, "(an object)"],
    ["10,000 nested arrays", `${"[".repeat(10_000)}${"]".repeat(10_000)}`, "(an array)"],
    ["1 MB of text", JSON.stringify("x".repeat(1_000_000)), "(a string of 1000000 characters)"],
  ])(
    "a specVersion of %s is refused as unsupported-version with a bounded message, never a RangeError (issue 24)",
    (_name, version, shown) => {
      const data = b64(`{"specVersion":${version},"type":"tool_call.requested"}`);
      const result = decodeLifecycleEvent(data);
      expect(!result.ok && result.error).toBeInstanceOf(UnsupportedVersionError);
      if (result.ok) return;
      expect(result.error.message.length).toBeLessThan(200);
      expect((result.error as UnsupportedVersionError).version).toBe(shown);
      // The error formats whole, as a logger would: nothing in it is the unbounded value.
      expect(JSON.stringify({ ...result.error, message: result.error.message }).length).toBeLessThan(600);
    },
  );

  it("marks every decode error permanent, so the batch engine quarantines instead of retrying", () => {
    for (const data of ["!!", b64("{"), b64("[]"), b64('{"specVersion":"9.0"}')]) {
      const result = decodeLifecycleEvent(data);
      expect(!result.ok && failureKindOf(result.error)).toBe("permanent");
    }
  });
});

describe("decodeToolCallJob", () => {
  it("decodes a valid job, with and without a deadline", () => {
    expect(decodeToolCallJob(JSON.stringify(job))).toEqual({ ok: true, value: job });
    const withDeadline = { ...job, deadline: "2026-11-30T10:05:00.000Z" };
    expect(decodeToolCallJob(JSON.stringify(withDeadline))).toEqual({ ok: true, value: withDeadline });
  });

  it.each([
    ["not JSON", "{oops", "bad-json"],
    ["arguments that are not an object", JSON.stringify({ ...job, arguments: [1, 2] }), "schema-violation"],
    ["a bad deadline", JSON.stringify({ ...job, deadline: "tomorrow" }), "schema-violation"],
    ["a v2 job", JSON.stringify({ ...job, specVersion: "2.0" }), "unsupported-version"],
  ])("rejects %s with %s", (_name, body, code) => {
    const result = decodeToolCallJob(body);
    expect(!result.ok && result.error.code).toBe(code);
  });
});
