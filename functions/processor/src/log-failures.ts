import { type BatchOutcome, ItemStatus } from "@mcp-pipeline/batch";
import { failureCodeOf, messageOf } from "@mcp-pipeline/contracts";
import type { KinesisStreamRecord } from "aws-lambda";

/** One log entry per record that failed (not-started records are summarised, not listed). */
export function failureDetails(outcome: BatchOutcome<KinesisStreamRecord>) {
  return outcome.outcomes.flatMap((o, i) =>
    o.status === ItemStatus.Failed
      ? [
          {
            sequenceNumber: outcome.items[i]?.kinesis.sequenceNumber,
            partitionKey: outcome.items[i]?.kinesis.partitionKey,
            cause: o.cause,
            code: failureCodeOf(o.error),
            message: messageOf(o.error),
          },
        ]
      : [],
  );
}
