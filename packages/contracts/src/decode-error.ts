import { PermanentError } from "./failure.js";

/** Why a payload could not be decoded. Each is permanent: the same bytes will never decode. */
export const DecodeErrorCode = {
  BadEncoding: "bad-encoding",
  BadJson: "bad-json",
  SchemaViolation: "schema-violation",
  UnsupportedVersion: "unsupported-version",
  /** The record around the payload (a Lambda Kinesis or SQS record) lacks a field, or holds the wrong type in one. */
  MalformedRecord: "malformed-record",
} as const;
export type DecodeErrorCode = (typeof DecodeErrorCode)[keyof typeof DecodeErrorCode];

export class DecodeError extends PermanentError {
  declare readonly code: DecodeErrorCode;

  constructor(code: DecodeErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
    this.name = "DecodeError";
  }
}

/** Not base64, or not UTF-8 once decoded. */
export class BadEncodingError extends DecodeError {
  constructor(message: string, options?: ErrorOptions) {
    super(DecodeErrorCode.BadEncoding, message, options);
    this.name = "BadEncodingError";
  }
}

export class BadJsonError extends DecodeError {
  constructor(message: string, options?: ErrorOptions) {
    super(DecodeErrorCode.BadJson, message, options);
    this.name = "BadJsonError";
  }
}

export interface SchemaIssue {
  /** Dotted path of the offending field, `(root)` for the document itself. */
  readonly path: string;
  readonly message: string;
}

/** Issues as a message lists them: `path: message; path: message`. */
const listed = (issues: readonly SchemaIssue[]): string =>
  issues.map((i) => `${i.path}: ${i.message}`).join("; ");

export class SchemaViolationError extends DecodeError {
  readonly issues: readonly SchemaIssue[];

  constructor(issues: readonly SchemaIssue[], options?: ErrorOptions) {
    super(DecodeErrorCode.SchemaViolation, `schema violation: ${listed(issues)}`, options);
    this.name = "SchemaViolationError";
    this.issues = issues;
  }
}

/**
 * A record whose envelope cannot be read (a Kinesis record without `kinesis.data`, an SQS record without
 * `attributes`, a field of the wrong type): no delivery of it will read better, so it is the record's own
 * permanent failure, set aside with these issues, never its batch's (issue 24).
 */
export class MalformedRecordError extends DecodeError {
  readonly issues: readonly SchemaIssue[];

  constructor(issues: readonly SchemaIssue[], options?: ErrorOptions) {
    super(DecodeErrorCode.MalformedRecord, `malformed record: ${listed(issues)}`, options);
    this.name = "MalformedRecordError";
    this.issues = issues;
  }
}

/**
 * A version as the message may show it: a version-shaped string as it is, anything else by its type. The
 * field comes from the payload, and the message is logged and stored (redact.ts).
 */
function describeVersion(version: unknown): string {
  if (typeof version === "string" && /^\d{1,4}(\.\d{1,4}){0,2}$/.test(version))
    return JSON.stringify(version);
  if (typeof version === "string") return `(a string of ${version.length} characters)`;
  if (version === null) return "(null)";
  if (Array.isArray(version)) return "(an array)";
  return typeof version === "object" ? "(an object)" : `(a ${typeof version})`;
}

export class UnsupportedVersionError extends DecodeError {
  /**
   * The version the payload declared, as the message shows it (describeVersion): a version-shaped string, else
   * only its type or length. Never the value itself, which may be anything (an object nested thousands of levels deep, megabytes of
   * text) and would follow the error into every log line that formats it.
   */
  readonly version: string;
  readonly supported: string;

  constructor(version: unknown, supported: string) {
    const declared = describeVersion(version);
    super(
      DecodeErrorCode.UnsupportedVersion,
      `unsupported specVersion ${declared}; this consumer reads ${supported}`,
    );
    this.name = "UnsupportedVersionError";
    this.version = declared;
    this.supported = supported;
  }
}
