import {
  BadJsonError,
  type DecodeResult,
  jsonErrorForLogs,
  SchemaViolationError,
} from "@mcp-pipeline/contracts";
import { dottedIssue } from "@mcp-pipeline/contracts/schema-issues";
import { type KinesisFailureRecord, kinesisFailureRecordSchema } from "./failure-record-schema.js";

/** Parses an SQS body as an on-failure record; anything else is a typed decode error. */
export function decodeFailureRecord(body: string): DecodeResult<KinesisFailureRecord> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (cause) {
    // Not `{ cause }`: V8's message quotes the body, and the error is logged and kept in the DLQ's attributes.
    return { ok: false, error: new BadJsonError(`not JSON: ${jsonErrorForLogs(cause)}`) };
  }
  const parsed = kinesisFailureRecordSchema.safeParse(json);
  if (!parsed.success) {
    return {
      ok: false,
      error: new SchemaViolationError(parsed.error.issues.map((issue) => dottedIssue(issue))),
    };
  }
  return { ok: true, value: parsed.data };
}
