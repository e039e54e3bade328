import * as z from "zod";
import {
  callIdSchema,
  instantSchema,
  sessionIdSchema,
  specVersionSchema,
  toolNameSchema,
} from "./schema-common.js";
import { ARGUMENTS_MESSAGE } from "./spec-version.js";

/** A request to run one tool call, carried by SQS (standard or FIFO, group = sessionId). */
export const toolCallJobSchema = z.object({
  specVersion: specVersionSchema,
  /** The idempotency key of the job: a redelivered or duplicated job never runs twice. */
  callId: callIdSchema,
  sessionId: sessionIdSchema,
  tool: toolNameSchema,
  /**
   * Validated against the tool's own JSON Schema by the worker, not here. Checked as a plain object
   * without being rebuilt: z.record would silently drop an argument named `__proto__`.
   */
  arguments: z.custom<Record<string, unknown>>(
    (value) => typeof value === "object" && value !== null && !Array.isArray(value),
    { message: ARGUMENTS_MESSAGE },
  ),
  enqueuedAt: instantSchema,
  /** After this instant the result is useless to the caller: the job fails permanently unrun. */
  deadline: instantSchema.optional(),
});

export type ToolCallJob = z.infer<typeof toolCallJobSchema>;
