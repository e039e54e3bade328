import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeLifecycleEvent,
  decodeLifecycleEventBytes,
  decodeToolCallJob,
  EncodeError,
  encodeLifecycleEvent,
  encodeLifecycleEventRecord,
  encodeToolCallJob,
  type ToolCallJob,
  type ToolCallLifecycleEvent,
} from "../../src/index.js";
import { job, requested } from "../fixtures.js";

const id = fc.string({ minLength: 1, maxLength: 40 });
const instant = fc
  .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2099-12-31T23:59:59Z"), noInvalidDate: true })
  .map((d) => d.toISOString());
const tool = fc.stringMatching(/^[A-Za-z0-9_.-]{1,20}$/);
const envelope = {
  specVersion: fc.constant("1.0"),
  eventId: id,
  sessionId: id,
  callId: id,
  tool,
  occurredAt: instant,
};
const event: fc.Arbitrary<ToolCallLifecycleEvent> = fc.oneof(
  fc.record({
    ...envelope,
    type: fc.constant("tool_call.requested" as const),
    argumentsDigest: fc.stringMatching(/^[0-9a-f]{64}$/),
  }),
  fc.record({
    ...envelope,
    type: fc.constant("tool_call.started" as const),
    attempt: fc.integer({ min: 1, max: 1000 }),
  }),
  fc.record({
    ...envelope,
    type: fc.constant("tool_call.completed" as const),
    durationMs: fc.nat(),
    result: fc.record({
      sizeBytes: fc.nat(),
      summary: fc.string({ maxLength: 100 }),
      location: fc.oneof(
        fc.constant({ kind: "inline" as const }),
        fc.record({ kind: fc.constant("s3" as const), bucket: fc.constant("results-bucket"), key: id }),
      ),
    }),
  }),
  fc.record({
    ...envelope,
    type: fc.constant("tool_call.failed" as const),
    durationMs: fc.nat(),
    error: fc.record({ code: id, message: fc.string({ maxLength: 100 }), retryable: fc.boolean() }),
  }),
);
const jobArb: fc.Arbitrary<ToolCallJob> = fc.record(
  {
    specVersion: fc.constant("1.0"),
    callId: id,
    sessionId: id,
    tool,
    arguments: fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue(), { maxKeys: 5 }),
    enqueuedAt: instant,
    deadline: instant,
  },
  { requiredKeys: ["specVersion", "callId", "sessionId", "tool", "arguments", "enqueuedAt"] },
);

describe("encoders are the exact inverse of the decoders", () => {
  it("round-trips every lifecycle event through a Kinesis record", () => {
    fc.assert(
      fc.property(event, (e) => {
        const record = encodeLifecycleEventRecord(e);
        expect(record.partitionKey).toBe(e.sessionId);
        expect(decodeLifecycleEventBytes(record.data)).toEqual({ ok: true, value: e });
        expect(decodeLifecycleEvent(Buffer.from(encodeLifecycleEvent(e)).toString("base64"))).toEqual({
          ok: true,
          value: e,
        });
      }),
      { numRuns: 300 },
    );
  });

  it("round-trips every job through an SQS body", () => {
    fc.assert(
      fc.property(jobArb, (j) => {
        // JSON has no -0 nor undefined: compare with what JSON can carry.
        expect(decodeToolCallJob(encodeToolCallJob(j))).toEqual({
          ok: true,
          value: JSON.parse(JSON.stringify(j)),
        });
      }),
      { numRuns: 300 },
    );
  });

  it("refuses to encode what a consumer would quarantine", () => {
    expect(() => encodeLifecycleEvent({ ...requested, callId: "" })).toThrow(EncodeError);
    expect(() => encodeToolCallJob({ ...job, tool: "no spaces allowed" })).toThrow(EncodeError);
  });
});
