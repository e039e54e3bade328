import {
  type BatchOutcome,
  countOutcomes,
  InvalidBatchResponseError,
  type ItemOutcome,
  ItemStatus,
  type PartialBatchResponse,
} from "@mcp-pipeline/batch";
import { MalformedRecordError, messageOf, sqsRecordIssues } from "@mcp-pipeline/contracts";
import type { FailureStoreDeps, FailureStoreSummary } from "@mcp-pipeline/recovery";
import type { SQSRecord } from "aws-lambda";

interface StoreResult {
  readonly response: PartialBatchResponse;
  readonly summary: FailureStoreSummary;
  readonly outcome: BatchOutcome<SQSRecord>;
}

const isObject = (record: unknown): boolean =>
  typeof record === "object" && record !== null && !Array.isArray(record);

/**
 * Runs `store` (packages/recovery's storeFailureRecords) over the records of a batch that are objects, and
 * sends every other entry of `Records` (null, a number, a string: a hand-made event, never Lambda's) to the
 * failure queue's DLQ as a malformed record. `store` reads each record's body before the record's own
 * handling starts, so such an entry would throw there and fail every batch-mate (issue 24); a record that
 * is an object but lacks fields is `store`'s to handle, and it does, record by record.
 *
 * An entry that is not an object has no messageId, so it cannot be reported for retry alone (§2.3): if the
 * DLQ refuses it, the only answer that loses nothing is the whole batch's failure, thrown
 * (InvalidBatchResponseError), after which every record of the batch comes back.
 */
export async function withUnreadableSetAside(
  records: readonly SQSRecord[],
  deadLetter: FailureStoreDeps["deadLetter"],
  store: (records: readonly SQSRecord[]) => Promise<StoreResult>,
): Promise<StoreResult> {
  if (records.every(isObject)) return store(records);
  const readable = records.filter(isObject);
  const result = await store(readable);
  const ofReadable = result.outcome.outcomes[Symbol.iterator]();
  const outcomes: ItemOutcome[] = [];
  for (const [index, record] of records.entries()) {
    if (isObject(record)) {
      outcomes.push(ofReadable.next().value as ItemOutcome);
      continue;
    }
    const error = new MalformedRecordError(sqsRecordIssues(record));
    try {
      await deadLetter(record, { code: error.code, message: error.message });
    } catch (sinkError) {
      throw new InvalidBatchResponseError(
        `record ${index} of the batch is not an SQS record and its DLQ refused it (${messageOf(sinkError)}): only a retry of the whole batch keeps it (docs/aws-semantics.md §2.3)`,
      );
    }
    outcomes.push({ status: ItemStatus.SetAside, error });
  }
  const unreadable = records.length - readable.length;
  return {
    response: result.response,
    summary: {
      ...result.summary,
      messages: records.length,
      deadLettered: result.summary.deadLettered + unreadable,
    },
    outcome: { ...result.outcome, items: records, outcomes, counts: countOutcomes(outcomes) },
  };
}
