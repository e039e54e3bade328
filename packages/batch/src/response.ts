import { compareSequenceNumbers } from "@mcp-pipeline/aws";
import { messageIdOf, previewOf, sequenceNumberOf } from "@mcp-pipeline/contracts";
import type { KinesisStreamRecord, SQSRecord } from "aws-lambda";
import { type BatchOutcome, needsRedelivery } from "./outcome.js";

declare const itemIdentifierBrand: unique symbol;
/** A sequence number or message id that is non-empty and belongs to the batch being answered. */
export type ItemIdentifier = string & { readonly [itemIdentifierBrand]: true };

export interface BatchItemFailure {
  readonly itemIdentifier: ItemIdentifier;
}

/**
 * The partial batch response, only obtainable from the builders below. Lambda reads an empty or null
 * identifier, a misspelled key or an unknown id as a whole-batch failure, and a missing
 * `batchItemFailures` key as success (docs/aws-semantics.md §1.4, §2.3), so the builders validate every
 * identifier against the batch and always write the key, even when the list is empty.
 */
export interface PartialBatchResponse {
  readonly batchItemFailures: readonly BatchItemFailure[];
}

/**
 * The builders refuse to produce a response that would lose or misreport records. Thrown from a
 * handler, it fails the whole batch, which is the safe reading: everything is delivered again.
 */
export class InvalidBatchResponseError extends Error {
  readonly identifier: unknown;

  constructor(message: string, identifier?: unknown) {
    super(message);
    this.name = "InvalidBatchResponseError";
    this.identifier = identifier;
  }
}

function toIdentifier(value: unknown, batch: ReadonlySet<string>): ItemIdentifier {
  if (typeof value !== "string" || value.length === 0) {
    throw new InvalidBatchResponseError(
      `item identifier must be a non-empty string, got ${previewOf(value)}`,
      value,
    );
  }
  if (!batch.has(value)) {
    throw new InvalidBatchResponseError(`item identifier ${previewOf(value)} is not in the batch`, value);
  }
  return value as ItemIdentifier;
}

/**
 * A record that must be delivered again but whose identifier cannot be read (lambda-records.ts): no
 * answer names it alone, and one that names nothing would let Lambda acknowledge it. An empty or unknown
 * identifier is Lambda's whole-batch failure (§1.4, §2.3), so the safe answer is that failure, thrown:
 * every record of the batch comes back, this one included. A malformed record only gets here when it
 * could not be set aside either (its quarantine or DLQ refused it).
 */
function unidentifiable(index: number, field: string): InvalidBatchResponseError {
  return new InvalidBatchResponseError(
    `record ${index} of the batch must be delivered again but has no readable ${field}: only a retry of the whole batch brings it back (docs/aws-semantics.md §1.4, §2.3)`,
  );
}

function assertComplete<T>(outcome: BatchOutcome<T>): void {
  if (outcome.outcomes.length !== outcome.items.length) {
    throw new InvalidBatchResponseError(
      `${outcome.outcomes.length} outcomes for ${outcome.items.length} records: every record needs one`,
    );
  }
}

/**
 * Kinesis: Lambda checkpoints just below the lowest sequence number in `batchItemFailures` and
 * redelivers everything from it (§1.4 "Checkpoint rule"), so the response names exactly one record: the
 * one with the lowest sequence number among those that need redelivery. Every record below it is then
 * done by construction, whatever order the records were given in: the choice is made by sequence
 * number (what Lambda reads), not by position in the array.
 */
export function kinesisBatchResponse(outcome: BatchOutcome<KinesisStreamRecord>): PartialBatchResponse {
  assertComplete(outcome);
  let lowest: string | undefined;
  outcome.outcomes.forEach((o, i) => {
    if (!needsRedelivery(o)) return;
    const sequenceNumber = sequenceNumberOf(outcome.items[i]);
    if (sequenceNumber === undefined) throw unidentifiable(i, "kinesis.sequenceNumber");
    if (lowest === undefined || compareSequenceNumbers(sequenceNumber, lowest) < 0) lowest = sequenceNumber;
  });
  if (lowest === undefined) return { batchItemFailures: [] };
  const batch = new Set(outcome.items.flatMap((r) => sequenceNumberOf(r) ?? []));
  return { batchItemFailures: [{ itemIdentifier: toIdentifier(lowest, batch) }] };
}

/**
 * SQS (standard and FIFO): Lambda deletes every message not named (§2.3), so every record that needs
 * redelivery is named by its messageId, in batch order.
 */
export function sqsBatchResponse(outcome: BatchOutcome<SQSRecord>): PartialBatchResponse {
  assertComplete(outcome);
  const batch = new Set(outcome.items.flatMap((r) => messageIdOf(r) ?? []));
  const failures: BatchItemFailure[] = [];
  outcome.outcomes.forEach((o, i) => {
    if (!needsRedelivery(o)) return;
    const messageId = messageIdOf(outcome.items[i]);
    if (messageId === undefined) throw unidentifiable(i, "messageId");
    failures.push({ itemIdentifier: toIdentifier(messageId, batch) });
  });
  return { batchItemFailures: failures };
}
