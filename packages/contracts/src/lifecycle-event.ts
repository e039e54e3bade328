import * as z from "zod";
import { LifecycleEventType } from "./lifecycle-event-type.js";
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

const requestedSchema = z.object({
  ...envelope,
  type: z.literal(LifecycleEventType.Requested),
  /** SHA-256 (hex) of the canonical arguments: enough to correlate without storing them twice. */
  argumentsDigest: z.string().regex(DIGEST_PATTERN, DIGEST_MESSAGE),
});

const startedSchema = z.object({
  ...envelope,
  type: z.literal(LifecycleEventType.Started),
  /** 1 for the first delivery of the job, then the SQS receive count. */
  attempt: z.number().int().min(1),
});

export const resultLocationSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("inline") }),
  z.object({ kind: z.literal("s3"), bucket: z.string().min(3).max(63), key: z.string().min(1).max(1024) }),
]);

const completedSchema = z.object({
  ...envelope,
  type: z.literal(LifecycleEventType.Completed),
  durationMs: z.number().int().min(0),
  result: z.object({
    sizeBytes: z.number().int().min(0),
    /** A short human-readable summary; the result itself lives in the table or S3. */
    summary: z.string().max(1024),
    location: resultLocationSchema,
  }),
});

const failedSchema = z.object({
  ...envelope,
  type: z.literal(LifecycleEventType.Failed),
  durationMs: z.number().int().min(0),
  error: z.object({
    code: z.string().min(1).max(128),
    message: z.string().max(2048),
    /** false when the worker gave up for good (permanent error); true when SQS may still retry. */
    retryable: z.boolean(),
  }),
});

export const lifecycleEventSchema = z.discriminatedUnion("type", [
  requestedSchema,
  startedSchema,
  completedSchema,
  failedSchema,
]);

export type ToolCallLifecycleEvent = z.infer<typeof lifecycleEventSchema>;
export type ToolCallRequested = z.infer<typeof requestedSchema>;
export type ToolCallStarted = z.infer<typeof startedSchema>;
export type ToolCallCompleted = z.infer<typeof completedSchema>;
export type ToolCallFailed = z.infer<typeof failedSchema>;
export type ResultLocation = z.infer<typeof resultLocationSchema>;
