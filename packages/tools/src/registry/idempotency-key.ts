import { createHash } from "node:crypto";

/**
 * The namespace of tool-run idempotency keys: a fixed UUID, so that a job's key is the same in every
 * worker, function and version of this code. Changing it changes every key a downstream remembers.
 */
export const TOOL_RUN_KEY_NAMESPACE = "d18f3c6e-2297-48d5-9fc5-7a0cde8a38c7";

/**
 * The idempotency key of every run of a job: the name-based UUID, version 5 (RFC 9562, section 5.5: SHA-1 of the
 * namespace's 16 bytes and the name's UTF-8 bytes), of the job's `callId` in TOOL_RUN_KEY_NAMESPACE.
 *
 * The worker runs a job's tool at most once per claim, but not exactly once: a claim whose lease ran out
 * under a slow run, or a run whose outcome could not be stored, lets a later delivery run the tool again
 * (docs/idempotency.md "What the worker cannot prevent"). So a tool that changes something outside gives
 * this key to its downstream, which deduplicates by it (the `Idempotency-Key` header of payment and cloud
 * APIs: the http.request tool sends it). It depends on the callId alone: the same for every delivery,
 * attempt, worker and function that runs the job, and different for every job. A 36-character UUID fits
 * the limits such APIs put on keys. Anyone can derive it again from the callId (a witness, a support query):
 * Python's `uuid.uuid5(uuid.UUID(TOOL_RUN_KEY_NAMESPACE), call_id)` gives the same text.
 */
export function toolRunIdempotencyKey(callId: string): string {
  const namespace = Buffer.from(TOOL_RUN_KEY_NAMESPACE.replaceAll("-", ""), "hex");
  const bytes = createHash("sha1").update(namespace).update(callId, "utf8").digest().subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x50; // version 5
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80; // the RFC's variant
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
