import type { SchemaIssue } from "./decode-error.js";
import { lifecycleEventSchema, type ToolCallLifecycleEvent } from "./lifecycle-event.js";
import * as s from "./light-schema.js";
import { type ToolCallJob, toolCallJobSchema } from "./tool-call-job.js";

export class EncodeError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "EncodeError";
  }
}

export interface KinesisRecordInput {
  readonly data: Uint8Array;
  /** The session id: records of one session stay in order on one shard. */
  readonly partitionKey: string;
}

const utf8 = new TextEncoder();

const listed = (issues: readonly SchemaIssue[]) => issues.map((i) => `${i.path}: ${i.message}`).join("; ");

/**
 * Serialises an event after validating it, so that a producer can never publish what a consumer
 * would quarantine. `decodeLifecycleEvent(base64(encode(e)))` returns `e`.
 */
export function encodeLifecycleEvent(event: ToolCallLifecycleEvent): string {
  const checked = s.check(lifecycleEventSchema, event);
  if (!checked.ok) throw new EncodeError(`invalid lifecycle event: ${listed(checked.issues)}`);
  return JSON.stringify(checked.value);
}

export function encodeLifecycleEventRecord(event: ToolCallLifecycleEvent): KinesisRecordInput {
  return { data: utf8.encode(encodeLifecycleEvent(event)), partitionKey: event.sessionId };
}

/** Serialises a job as an SQS body. `decodeToolCallJob(encodeToolCallJob(j))` returns `j`. */
export function encodeToolCallJob(job: ToolCallJob): string {
  const checked = s.check(toolCallJobSchema, job);
  if (!checked.ok) throw new EncodeError(`invalid tool-call job: ${listed(checked.issues)}`);
  return JSON.stringify(checked.value);
}
