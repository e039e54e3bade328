import * as s from "@mcp-pipeline/contracts/light-schema";
import { describeIssue } from "@mcp-pipeline/contracts/schema-issues";
import { MAX_ARRIVAL_SECONDS, QUARANTINE_FORMAT_VERSION } from "./version.js";

/**
 * The quarantine format (v1), declared once with light-schema: what the processor and dlq-redrive check
 * every record with before writing it, and what the reader checks every object with, with no zod in
 * their bundles (docs/benchmarks/cold-start.md). Unknown keys are dropped.
 */

/** Why a record was set aside. `code` is a decode error code, a handler's permanent code, or an ESM condition. */
export const quarantineReasonSchema = s.object({
  code: s.text({ min: 1 }),
  message: s.text(),
  details: s.optional(s.unknown()),
});

export const kinesisSourceSchema = s.object({
  kind: s.literal("kinesis"),
  streamArn: s.text({ min: 1 }),
  shardId: s.text({ min: 1 }),
  sequenceNumber: s.text({ pattern: /^\d{1,128}$/ }),
  partitionKey: s.text({ min: 1, max: 256 }),
  /**
   * Epoch seconds with milliseconds, as Lambda delivers it (docs/aws-semantics.md §1.7), within what a Date
   * holds: the key and the counts by day are dated by it.
   */
  approximateArrivalTimestamp: s.number({ min: 0, max: MAX_ARRIVAL_SECONDS }),
});

/** What the Kinesis ESM's on-failure record said about the failure (§1.6), when that is the origin. */
export const failureContextSchema = s.object({
  condition: s.optional(s.text()),
  approximateInvokeCount: s.optional(s.integer({})),
  functionError: s.optional(s.nullable(s.text())),
  requestId: s.optional(s.text()),
  functionArn: s.optional(s.text()),
  timestamp: s.optional(s.text()),
});

export const quarantineRecordSchema = s.object({
  formatVersion: s.literal(QUARANTINE_FORMAT_VERSION),
  source: kinesisSourceSchema,
  /** The record's bytes exactly as the stream held them, base64: replay puts back these bytes. */
  data: s.text(),
  reason: quarantineReasonSchema,
  failure: s.optional(failureContextSchema),
  quarantinedAt: s.datetime(),
  /** The function that wrote the record. */
  quarantinedBy: s.text({ min: 1 }),
});

export type QuarantineReason = s.Infer<typeof quarantineReasonSchema>;
export type KinesisSource = s.Infer<typeof kinesisSourceSchema>;
export type FailureContext = s.Infer<typeof failureContextSchema>;
export type QuarantineRecord = s.Infer<typeof quarantineRecordSchema>;

export type QuarantineIssue = s.Issue;

export type QuarantineValidation =
  | { readonly success: true; readonly data: QuarantineRecord }
  | { readonly success: false; readonly issues: readonly QuarantineIssue[] };

/** Checks a record against the format: the record with unknown keys dropped, or an issue per failing field. */
export function validateQuarantineRecord(value: unknown): QuarantineValidation {
  const parsed = quarantineRecordSchema.safeParse(value);
  return parsed.success ? parsed : { success: false, issues: parsed.error.issues };
}

/** `source.sequenceNumber: Invalid string: must match pattern /^\d{1,128}$/; ...` */
export const describeIssues = (issues: readonly QuarantineIssue[]) =>
  issues.map((issue) => describeIssue(issue)).join("; ");
