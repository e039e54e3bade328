import type { DecodeResult } from "./decode.js";
import { MalformedRecordError, type SchemaIssue } from "./decode-error.js";
import { messageOf } from "./failure.js";
import { previewOf } from "./preview.js";

/**
 * The fields of a record as Lambda delivers it (docs/aws-semantics.md §1.7 Kinesis, §2.4 SQS), read
 * without trusting the record. Lambda builds well-formed records, but a handler also gets hand-made events
 * (a console test, `aws lambda invoke`, a trigger wired to the wrong function), and a record missing a
 * field, or holding the wrong type in one, must be that record's own failure: a `TypeError` thrown while
 * the batch reads its records fails the whole invocation, and every batch-mate spends a retry (Kinesis) or
 * a receive (SQS) on it (issue 24). Everything the engine, the responses and the cores read from a record
 * before its own handling starts goes through here; what a record lacks is `undefined`, never a throw.
 */

type Fields = Readonly<Record<string, unknown>>;

const isFields = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The value at `path`, or undefined: never a throw, even from an object whose getter throws (an in-process caller's). */
function field(record: unknown, ...path: readonly string[]): unknown {
  let value: unknown = record;
  try {
    for (const key of path) {
      if (!isFields(value) || !Object.hasOwn(value, key)) return undefined;
      value = value[key];
    }
  } catch {
    return undefined;
  }
  return value;
}

const nonEmpty = (value: unknown): string | undefined =>
  typeof value === "string" && value.length > 0 ? value : undefined;

const SEQUENCE_NUMBER = /^\d{1,128}$/;
const RECEIVE_COUNT = /^[1-9]\d{0,9}$/;

/** `kinesis.sequenceNumber` when it is one (decimal digits, §1.7): the record's identifier in a response (§1.4). */
export function sequenceNumberOf(record: unknown): string | undefined {
  const value = field(record, "kinesis", "sequenceNumber");
  return typeof value === "string" && SEQUENCE_NUMBER.test(value) ? value : undefined;
}

/** `kinesis.partitionKey` when it is a non-empty string: what orders the record (§1.2). */
export function partitionKeyOf(record: unknown): string | undefined {
  return nonEmpty(field(record, "kinesis", "partitionKey"));
}

/** `kinesis.approximateArrivalTimestamp` (epoch seconds, §1.7) when it is a finite number. */
export function arrivalSecondsOf(record: unknown): number | undefined {
  const value = field(record, "kinesis", "approximateArrivalTimestamp");
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** `messageId` when it is a non-empty string: the record's identifier in a response (§2.3). */
export function messageIdOf(record: unknown): string | undefined {
  return nonEmpty(field(record, "messageId"));
}

/** `attributes.MessageGroupId` (FIFO, §2.4) when it is a non-empty string. */
export function messageGroupIdOf(record: unknown): string | undefined {
  return nonEmpty(field(record, "attributes", "MessageGroupId"));
}

/** `attributes.ApproximateReceiveCount` when it is a whole number of at least 1, written as text (§2.4). */
export function receiveCountOf(record: unknown): number | undefined {
  const value = field(record, "attributes", "ApproximateReceiveCount");
  if (typeof value !== "string" || !RECEIVE_COUNT.test(value)) return undefined;
  return Number(value);
}

/** `eventSourceARN` when it is a non-empty string. */
export function eventSourceArnOf(record: unknown): string | undefined {
  return nonEmpty(field(record, "eventSourceARN"));
}

/** A JSON value's type as the issues name it; never the value itself, which may be anything. */
function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

type Check = (value: unknown) => string | undefined;

const required =
  (expected: string, accepts: (value: unknown) => boolean): Check =>
  (value) =>
    value === undefined
      ? "required"
      : accepts(value)
        ? undefined
        : `expected ${expected}, received ${typeName(value)}`;

const aString = required("string", (v) => typeof v === "string");
const aNonEmptyString = required("a non-empty string", (v) => typeof v === "string" && v.length > 0);
const anObject = required("object", isFields);

function check(issues: SchemaIssue[], record: unknown, path: string, rule: Check): void {
  const message = rule(field(record, ...path.split(".")));
  if (message !== undefined) issues.push({ path, message });
}

function root(record: unknown, what: string): SchemaIssue[] | undefined {
  return isFields(record)
    ? undefined
    : [{ path: "(root)", message: `expected ${what} (an object), received ${typeName(record)}` }];
}

/**
 * What is wrong with a Kinesis record's envelope for a consumer that decodes `kinesis.data` and can quarantine
 * the record (§1.7): empty when nothing is. Issues name the field and the type found, never the value.
 * What the record needs: its payload, the key that orders it (a record whose order is unknown is not applied
 * out of order), and the sequence number that identifies it. Metadata it can do without (the arrival time,
 * `eventID`, `eventSourceARN`) is not required: a record with a good payload is applied whatever they hold.
 */
export function kinesisRecordIssues(record: unknown): SchemaIssue[] {
  const notObject = root(record, "a Kinesis record");
  if (notObject) return notObject;
  const issues: SchemaIssue[] = [];
  check(issues, record, "kinesis", anObject);
  if (issues.length > 0) return issues;
  check(issues, record, "kinesis.data", aString);
  check(issues, record, "kinesis.partitionKey", aNonEmptyString);
  check(
    issues,
    record,
    "kinesis.sequenceNumber",
    required("a sequence number (decimal digits)", (v) => typeof v === "string" && SEQUENCE_NUMBER.test(v)),
  );
  return issues;
}

/**
 * What is wrong with an SQS record's envelope for a consumer that decodes `body` and can dead-letter the
 * message (§2.4): empty when nothing is. Issues name the field and the type found, never the value.
 * What the record needs: its body, the messageId that identifies it, and its attributes: the receive count
 * (the attempt, and whether it is the last before the DLQ, §2.3) and, on a FIFO queue, the group that orders
 * it (§3). `eventSourceARN` is not required: without it only the retry backoff is skipped.
 */
export function sqsRecordIssues(record: unknown): SchemaIssue[] {
  const notObject = root(record, "an SQS record");
  if (notObject) return notObject;
  const issues: SchemaIssue[] = [];
  check(issues, record, "messageId", aNonEmptyString);
  check(issues, record, "body", aString);
  check(issues, record, "attributes", anObject);
  if (isFields(field(record, "attributes"))) {
    check(
      issues,
      record,
      "attributes.ApproximateReceiveCount",
      required(
        "a receive count (a whole number as text)",
        (v) => typeof v === "string" && RECEIVE_COUNT.test(v),
      ),
    );
    const group = field(record, "attributes", "MessageGroupId");
    if (group !== undefined) check(issues, record, "attributes.MessageGroupId", aNonEmptyString);
  }
  return issues;
}

/**
 * Decodes one record's payload, unable to throw: a record whose envelope has `issues` is a
 * MalformedRecordError listing them, and anything that throws while the record is read or decoded (a
 * hostile object, a decoder bug) is a MalformedRecordError carrying that error, so it fails that record
 * alone instead of the batch that was being read. `decode` may then read the envelope as its type says.
 */
export function decodeRecord<R, T>(
  record: R,
  issuesOf: (record: unknown) => SchemaIssue[],
  decode: (record: R) => DecodeResult<T>,
): DecodeResult<T> {
  try {
    const issues = issuesOf(record);
    if (issues.length > 0) return { ok: false, error: new MalformedRecordError(issues) };
    return decode(record);
  } catch (error) {
    let why: string;
    try {
      why = previewOf(messageOf(error));
    } catch {
      why = "an error that cannot be read either";
    }
    return {
      ok: false,
      error: new MalformedRecordError([{ path: "(record)", message: `could not be read: ${why}` }], {
        cause: error,
      }),
    };
  }
}
