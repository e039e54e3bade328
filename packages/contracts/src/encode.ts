import { lifecycleEventSchema, type ToolCallLifecycleEvent } from "./lifecycle-event.js";
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

/**
 * Serialises an event after validating it, so that a producer can never publish what a consumer
 * would quarantine. `decodeLifecycleEvent(base64(encode(e)))` returns `e`.
 */
export function encodeLifecycleEvent(event: ToolCallLifecycleEvent): string {
  const parsed = lifecycleEventSchema.safeParse(event);
  if (!parsed.success) throw new EncodeError(`invalid lifecycle event: ${parsed.error.message}`);
  return JSON.stringify(parsed.data);
}

export function encodeLifecycleEventRecord(event: ToolCallLifecycleEvent): KinesisRecordInput {
  return { data: utf8.encode(encodeLifecycleEvent(event)), partitionKey: event.sessionId };
}

/** Serialises a job as an SQS body. `decodeToolCallJob(encodeToolCallJob(j))` returns `j`. */
export function encodeToolCallJob(job: ToolCallJob): string {
  const parsed = toolCallJobSchema.safeParse(job);
  if (!parsed.success) throw new EncodeError(`invalid tool-call job: ${parsed.error.message}`);
  return JSON.stringify(parsed.data);
}
