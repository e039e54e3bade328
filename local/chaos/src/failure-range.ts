import type { FailureRange } from "./ledger.js";

/**
 * The range a Kinesis on-failure record names (its KinesisBatchInfo, §1.6), from an SQS message body;
 * undefined for any other body.
 */
export function failureRangeOf(body: string): FailureRange | undefined {
  try {
    const info = (
      JSON.parse(body) as {
        KinesisBatchInfo?: { shardId?: unknown; startSequenceNumber?: unknown; endSequenceNumber?: unknown };
      }
    ).KinesisBatchInfo;
    const { shardId, startSequenceNumber: start, endSequenceNumber: end } = info ?? {};
    return typeof shardId === "string" && typeof start === "string" && typeof end === "string"
      ? { shardId, start, end }
      : undefined;
  } catch {
    return undefined;
  }
}
