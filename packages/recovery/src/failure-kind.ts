import { DeadLetterAttribute } from "@mcp-pipeline/aws";
import type { QuarantineRecord } from "@mcp-pipeline/recovery/quarantine";

/**
 * Whether putting a failed input back can help. Retryable: it failed for a cause outside itself (the
 * downstream, a throttle, time) and is valid; once the cause is fixed it goes through. Permanent: the
 * input itself is wrong; the same bytes fail the same way until the producer or the consumer changes.
 */
export const FailureKind = {
  Permanent: "permanent",
  Retryable: "retryable",
} as const;
export type FailureKind = (typeof FailureKind)[keyof typeof FailureKind];

/**
 * A quarantined record is retryable when the processor's event source gave up on it: dlq-redrive stores
 * it with the on-failure record's context (RetryAttemptsExhausted, RecordAgeExceeded: docs/aws-semantics.md
 * §1.6), and the processor fails a record that way only for transient errors, since it quarantines the
 * permanent ones itself. Anything the processor set aside (bad-encoding, bad-json, schema-violation,
 * unsupported-version, a handler's permanent code) has no failure context and is permanent.
 */
export function quarantineFailureKind(record: Pick<QuarantineRecord, "failure">): FailureKind {
  return record.failure === undefined ? FailureKind.Permanent : FailureKind.Retryable;
}

/**
 * What a DLQ message that carries no reason attribute failed of: SQS moved it after `maxReceiveCount`
 * receives (§2.3), each a transient failure, so it is retryable. A name for `--reason` to select them.
 */
export const MAX_RECEIVES_REASON = "max-receives";

/** A DLQ message's reason code: the worker's `pipeline.reason.code`, or MAX_RECEIVES_REASON. */
export function deadLetterReason(
  attributes: Readonly<Record<string, { readonly StringValue?: string | undefined }>>,
): string {
  return attributes[DeadLetterAttribute.ReasonCode]?.StringValue ?? MAX_RECEIVES_REASON;
}

/**
 * A DLQ message is permanent when a worker (or dlq-redrive) sent it there itself with a reason: it
 * does that only for a body that can never succeed (not a job, not a failure record). One that SQS
 * moved after its receives ran out carries no reason and is retryable.
 */
export function deadLetterFailureKind(reason: string): FailureKind {
  return reason === MAX_RECEIVES_REASON ? FailureKind.Retryable : FailureKind.Permanent;
}
