import { LifecycleEventType } from "./lifecycle-event-type.js";
import * as s from "./light-schema.js";
import {
  callIdSchema,
  eventIdSchema,
  instantSchema,
  sessionIdSchema,
  specVersionSchema,
  toolNameSchema,
} from "./schema-common.js";
import { DIGEST_MESSAGE, DIGEST_PATTERN } from "./spec-version.js";

export { LifecycleEventType };

const envelope = {
  specVersion: specVersionSchema,
  /** The producer's id for this event; the idempotency key, stable across producer retries. */
  eventId: eventIdSchema,
  sessionId: sessionIdSchema,
  callId: callIdSchema,
  tool: toolNameSchema,
  occurredAt: instantSchema,
};

const nonNegative = s.integer({ min: 0 });

const requestedSchema = s.object({
  ...envelope,
  type: s.literal(LifecycleEventType.Requested),
  /** SHA-256 (hex) of the canonical arguments: enough to correlate without storing them twice. */
  argumentsDigest: s.text({ pattern: DIGEST_PATTERN, patternMessage: DIGEST_MESSAGE }),
});

const startedSchema = s.object({
  ...envelope,
  type: s.literal(LifecycleEventType.Started),
  /** 1 for the first delivery of the job, then the SQS receive count. */
  attempt: s.integer({ min: 1 }),
});

export const resultLocationSchema = s.oneOf("kind", {
  inline: s.object({ kind: s.literal("inline") }),
  s3: s.object({
    kind: s.literal("s3"),
    bucket: s.text({ min: 3, max: 63 }),
    key: s.text({ min: 1, max: 1024 }),
  }),
});

const completedSchema = s.object({
  ...envelope,
  type: s.literal(LifecycleEventType.Completed),
  durationMs: nonNegative,
  result: s.object({
    sizeBytes: nonNegative,
    /** A short human-readable summary; the result itself lives in the table or S3. */
    summary: s.text({ max: 1024 }),
    location: resultLocationSchema,
  }),
});

const failedSchema = s.object({
  ...envelope,
  type: s.literal(LifecycleEventType.Failed),
  durationMs: nonNegative,
  error: s.object({
    code: s.text({ min: 1, max: 128 }),
    message: s.text({ max: 2048 }),
    /** false when the worker gave up for good (permanent error); true when SQS may still retry. */
    retryable: s.boolean(),
  }),
});

/** The lifecycle events on the stream, told apart by `type`. */
export const lifecycleEventSchema = s.oneOf("type", {
  [LifecycleEventType.Requested]: requestedSchema,
  [LifecycleEventType.Started]: startedSchema,
  [LifecycleEventType.Completed]: completedSchema,
  [LifecycleEventType.Failed]: failedSchema,
});

export type ToolCallLifecycleEvent = s.Infer<typeof lifecycleEventSchema>;
export type ToolCallRequested = s.Infer<typeof requestedSchema>;
export type ToolCallStarted = s.Infer<typeof startedSchema>;
export type ToolCallCompleted = s.Infer<typeof completedSchema>;
export type ToolCallFailed = s.Infer<typeof failedSchema>;
export type ResultLocation = s.Infer<typeof resultLocationSchema>;
