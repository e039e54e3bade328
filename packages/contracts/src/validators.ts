import type { SchemaIssue } from "./decode-error.js";
import {
  boolean,
  discriminated,
  instant,
  integer,
  literal,
  object,
  optional,
  plainObject,
  type Rule,
  string,
} from "./field-rules.js";
import type { ToolCallLifecycleEvent } from "./lifecycle-event.js";
import { LifecycleEventType } from "./lifecycle-event-type.js";
import {
  ARGUMENTS_MESSAGE,
  DIGEST_MESSAGE,
  DIGEST_PATTERN,
  ID_MAX,
  SESSION_ID_MAX,
  SPEC_VERSION_MESSAGE,
  SPEC_VERSION_PATTERN,
  TOOL_NAME_MESSAGE,
  TOOL_NAME_PATTERN,
} from "./spec-version.js";
import type { ToolCallJob } from "./tool-call-job.js";

/**
 * lifecycle-event.ts and tool-call-job.ts, field for field, without zod: what decode.ts runs on every
 * record. The zod schemas remain the definition (encoders, JSON Schema, docs); test/validators.test.ts
 * runs both over the bad-input table and generated values and requires the same outcome.
 */

const specVersion = string({ pattern: SPEC_VERSION_PATTERN, patternMessage: SPEC_VERSION_MESSAGE });
const id = string({ min: 1, max: ID_MAX });
const sessionId = string({ min: 1, max: SESSION_ID_MAX });
const tool = string({ pattern: TOOL_NAME_PATTERN, patternMessage: TOOL_NAME_MESSAGE });
const nonNegative = integer(0);

const envelope = {
  specVersion,
  eventId: id,
  sessionId,
  callId: id,
  tool,
  occurredAt: instant(),
};

const lifecycleEvent = discriminated("type", {
  [LifecycleEventType.Requested]: object({
    ...envelope,
    type: literal(LifecycleEventType.Requested),
    argumentsDigest: string({ pattern: DIGEST_PATTERN, patternMessage: DIGEST_MESSAGE }),
  }),
  [LifecycleEventType.Started]: object({
    ...envelope,
    type: literal(LifecycleEventType.Started),
    attempt: integer(1),
  }),
  [LifecycleEventType.Completed]: object({
    ...envelope,
    type: literal(LifecycleEventType.Completed),
    durationMs: nonNegative,
    result: object({
      sizeBytes: nonNegative,
      summary: string({ max: 1024 }),
      location: discriminated("kind", {
        inline: object({ kind: literal("inline") }),
        s3: object({
          kind: literal("s3"),
          bucket: string({ min: 3, max: 63 }),
          key: string({ min: 1, max: 1024 }),
        }),
      }),
    }),
  }),
  [LifecycleEventType.Failed]: object({
    ...envelope,
    type: literal(LifecycleEventType.Failed),
    durationMs: nonNegative,
    error: object({
      code: string({ min: 1, max: 128 }),
      message: string({ max: 2048 }),
      retryable: boolean(),
    }),
  }),
});

const toolCallJob = object({
  specVersion,
  callId: id,
  sessionId,
  tool,
  arguments: plainObject(ARGUMENTS_MESSAGE),
  enqueuedAt: instant(),
  deadline: optional(instant()),
});

export type Validated<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly issues: readonly SchemaIssue[] };

function run<T>(rule: Rule, value: unknown): Validated<T> {
  const issues: SchemaIssue[] = [];
  const kept = rule(value, [], issues);
  return issues.length === 0 ? { ok: true, value: kept as T } : { ok: false, issues };
}

export function isSpecVersion(value: unknown): boolean {
  return typeof value === "string" && SPEC_VERSION_PATTERN.test(value);
}

export function validateLifecycleEvent(value: unknown): Validated<ToolCallLifecycleEvent> {
  return run(lifecycleEvent, value);
}

export function validateToolCallJob(value: unknown): Validated<ToolCallJob> {
  return run(toolCallJob, value);
}
