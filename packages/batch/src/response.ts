import type { KinesisStreamRecord, SQSRecord } from "aws-lambda";
import { type BatchOutcome, type ItemOutcome, ItemStatus, needsRedelivery } from "./outcome.js";

declare const itemIdentifierBrand: unique symbol;
/** A sequence number or message id that is non-empty and belongs to the batch being answered. */
export type ItemIdentifier = string & { readonly [itemIdentifierBrand]: true };

export interface BatchItemFailure {
  readonly itemIdentifier: ItemIdentifier;
}

/**
 * The partial batch response, only obtainable from the builders below. Lambda reads an empty or null
 * identifier, a misspelled key or an unknown id as a whole-batch failure, and a missing
 * `batchItemFailures` key as success (esm-semantics.md §1.4, §2.3), so the builders validate every
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
      `item identifier must be a non-empty string, got ${JSON.stringify(value)}`,
      value,
    );
  }
  if (!batch.has(value)) {
    throw new InvalidBatchResponseError(`item identifier ${value} is not in the batch`, value);
  }
  return value as ItemIdentifier;
}

function assertComplete<T>(outcome: BatchOutcome<T>): void {
  if (outcome.outcomes.length !== outcome.items.length) {
    throw new InvalidBatchResponseError(
      `${outcome.outcomes.length} outcomes for ${outcome.items.length} records: every record needs one`,
    );
  }
}

const isDone = (o: ItemOutcome): boolean =>
  o.status === ItemStatus.Succeeded || o.status === ItemStatus.SetAside;

/**
 * Kinesis: Lambda checkpoints at the lowest reported sequence number and redelivers everything from
 * there (§1.4 "Checkpoint rule"), so the response names exactly that record, and every record before it
 * must be done: otherwise the checkpoint would skip it and it would be lost.
 */
export function kinesisBatchResponse(outcome: BatchOutcome<KinesisStreamRecord>): PartialBatchResponse {
  assertComplete(outcome);
  const first = outcome.outcomes.findIndex(needsRedelivery);
  if (first === -1) return { batchItemFailures: [] };
  const undone = outcome.outcomes.slice(0, first).findIndex((o) => !isDone(o));
  if (undone !== -1) {
    throw new InvalidBatchResponseError(
      `record ${undone} is unfinished but precedes the checkpoint ${first}`,
    );
  }
  const batch = new Set(outcome.items.map((r) => r.kinesis.sequenceNumber));
  const record = outcome.items[first] as KinesisStreamRecord;
  return { batchItemFailures: [{ itemIdentifier: toIdentifier(record.kinesis.sequenceNumber, batch) }] };
}

/**
 * SQS (standard and FIFO): Lambda deletes every message not named (§2.3), so every record that needs
 * redelivery is named by its messageId, in batch order.
 */
export function sqsBatchResponse(outcome: BatchOutcome<SQSRecord>): PartialBatchResponse {
  assertComplete(outcome);
  const batch = new Set(outcome.items.map((r) => r.messageId));
  const failures: BatchItemFailure[] = [];
  outcome.outcomes.forEach((o, i) => {
    if (needsRedelivery(o))
      failures.push({ itemIdentifier: toIdentifier(outcome.items[i]?.messageId, batch) });
  });
  return { batchItemFailures: failures };
}
