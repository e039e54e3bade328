import {
  BadEncodingError,
  BadJsonError,
  type DecodeError,
  SchemaViolationError,
  UnsupportedVersionError,
} from "./decode-error.js";
import { lifecycleEventSchema, type ToolCallLifecycleEvent } from "./lifecycle-event.js";
import * as s from "./light-schema.js";
import { jsonErrorForLogs } from "./redact.js";
import { SPEC_VERSION_PATTERN, SUPPORTED_SPEC_VERSIONS } from "./spec-version.js";
import { type ToolCallJob, toolCallJobSchema } from "./tool-call-job.js";

export type DecodeResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: DecodeError };

// Buffer.from(s, "base64") silently skips invalid characters, so a corrupted record would decode into
// garbage and fail later as a confusing schema error. Validate the alphabet and padding first.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

function fail<T>(error: DecodeError): DecodeResult<T> {
  return { ok: false, error };
}

function toUtf8(bytes: Uint8Array): DecodeResult<string> {
  try {
    return { ok: true, value: utf8.decode(bytes) };
  } catch (cause) {
    return fail(new BadEncodingError("payload is not valid UTF-8", { cause }));
  }
}

function parseJson(text: string): DecodeResult<unknown> {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (cause) {
    // Not `{ cause }`: V8's message quotes the payload, and the error is logged and stored (redact.ts).
    return fail(new BadJsonError(`payload is not JSON: ${jsonErrorForLogs(cause)}`));
  }
}

/** Version first, so that a v2 payload is reported as unsupported rather than as a schema violation. */
function validate<T>(value: unknown, schema: s.Field<T>): DecodeResult<T> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return fail(new SchemaViolationError([{ path: "(root)", message: "expected a JSON object" }]));
  }
  const version = (value as { specVersion?: unknown }).specVersion;
  if (version === undefined) {
    return fail(new SchemaViolationError([{ path: "specVersion", message: "required" }]));
  }
  if (typeof version !== "string" || !SPEC_VERSION_PATTERN.test(version)) {
    return fail(new UnsupportedVersionError(version, SUPPORTED_SPEC_VERSIONS));
  }
  const checked = s.check(schema, value);
  return checked.ok ? checked : fail(new SchemaViolationError(checked.issues));
}

function decodeText<T>(text: string, schema: s.Field<T>): DecodeResult<T> {
  const json = parseJson(text);
  return json.ok ? validate(json.value, schema) : json;
}

export function decodeBase64(data: string): DecodeResult<Uint8Array> {
  if (!BASE64.test(data)) return fail(new BadEncodingError("data is not valid base64"));
  return { ok: true, value: Buffer.from(data, "base64") };
}

/** Decodes the raw bytes of a Kinesis record (as PutRecords wrote them) into a lifecycle event. */
export function decodeLifecycleEventBytes(bytes: Uint8Array): DecodeResult<ToolCallLifecycleEvent> {
  const text = toUtf8(bytes);
  return text.ok ? decodeText(text.value, lifecycleEventSchema) : text;
}

/** Decodes `kinesis.data` of a Lambda Kinesis record (base64) into a lifecycle event. */
export function decodeLifecycleEvent(base64Data: string): DecodeResult<ToolCallLifecycleEvent> {
  const bytes = decodeBase64(base64Data);
  return bytes.ok ? decodeLifecycleEventBytes(bytes.value) : bytes;
}

/** Decodes an SQS message body into a tool-call job. */
export function decodeToolCallJob(body: string): DecodeResult<ToolCallJob> {
  return decodeText(body, toolCallJobSchema);
}
