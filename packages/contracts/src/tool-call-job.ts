import * as s from "./light-schema.js";
import {
  callIdSchema,
  instantSchema,
  sessionIdSchema,
  specVersionSchema,
  toolNameSchema,
} from "./schema-common.js";
import { ARGUMENTS_MESSAGE } from "./spec-version.js";

/** A request to run one tool call, carried by SQS (standard or FIFO, group = sessionId). */
export const toolCallJobSchema = s.object({
  specVersion: specVersionSchema,
  /** The idempotency key of the job: a redelivered or duplicated job never runs twice. */
  callId: callIdSchema,
  sessionId: sessionIdSchema,
  tool: toolNameSchema,
  /**
   * Validated against the tool's own JSON Schema by the worker, not here. Checked as a plain object
   * without being rebuilt, so that an argument named `__proto__` stays an argument.
   */
  arguments: s.plainObject(ARGUMENTS_MESSAGE),
  enqueuedAt: instantSchema,
  /** After this instant the result is useless to the caller: the job fails permanently unrun. */
  deadline: s.optional(instantSchema),
});

export type ToolCallJob = s.Infer<typeof toolCallJobSchema>;
