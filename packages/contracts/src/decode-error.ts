import { PermanentError } from "./failure.js";

/** Why a payload could not be decoded. Each is permanent: the same bytes will never decode. */
export const DecodeErrorCode = {
  BadEncoding: "bad-encoding",
  BadJson: "bad-json",
  SchemaViolation: "schema-violation",
  UnsupportedVersion: "unsupported-version",
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

export class SchemaViolationError extends DecodeError {
  readonly issues: readonly SchemaIssue[];

  constructor(issues: readonly SchemaIssue[], options?: ErrorOptions) {
    super(
      DecodeErrorCode.SchemaViolation,
      `schema violation: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`,
      options,
    );
    this.name = "SchemaViolationError";
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
  /** The version the payload declared, as found (may not even be a string). */
  readonly version: unknown;
  readonly supported: string;

  constructor(version: unknown, supported: string) {
    super(
      DecodeErrorCode.UnsupportedVersion,
      `unsupported specVersion ${describeVersion(version)}; this consumer reads ${supported}`,
    );
    this.name = "UnsupportedVersionError";
    this.version = version;
    this.supported = supported;
  }
}
