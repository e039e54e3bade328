/**
 * The two ways a unit of work can fail, as a type rather than a string match.
 *
 * - permanent: retrying cannot help (bad encoding, schema violation, unknown tool...). The record is
 *   set aside (quarantine, DLQ, failed result) and acknowledged so it never blocks its shard or group.
 * - transient: retrying may help (throttling, timeouts, 5xx). The record is reported as failed and
 *   the event source retries it.
 *
 * Classification is structural (`kind` on the error) so that it survives duplicate copies of this
 * package in a bundle, the same reason Powertools matches errors by `name`.
 */
export const FailureKind = {
  Permanent: "permanent",
  Transient: "transient",
} as const;
export type FailureKind = (typeof FailureKind)[keyof typeof FailureKind];

/** What both kinds carry: the kind, and a stable, machine-readable reason, e.g. `schema-violation`. */
abstract class ClassifiedError extends Error {
  abstract readonly kind: FailureKind;
  readonly code: string;

  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

export class PermanentError extends ClassifiedError {
  readonly kind = FailureKind.Permanent;
  override name = "PermanentError";
}

export class TransientError extends ClassifiedError {
  readonly kind = FailureKind.Transient;
  override name = "TransientError";
}

/**
 * Unknown errors are transient: a retry is bounded (retry attempts, record age, maxReceiveCount) and
 * ends in a DLQ or on-failure destination, whereas calling an unknown error permanent would discard
 * work that might have succeeded.
 */
export function failureKindOf(error: unknown): FailureKind {
  if (typeof error === "object" && error !== null && (error as { kind?: unknown }).kind === "permanent") {
    return FailureKind.Permanent;
  }
  return FailureKind.Transient;
}

/** The `code` of a pipeline error, or the error's name for anything else. */
export function failureCodeOf(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && code.length > 0) return code;
    const name = (error as { name?: unknown }).name;
    if (typeof name === "string" && name.length > 0) return name;
  }
  return "unknown";
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
