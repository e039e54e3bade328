import { kinesisRecord, sequenceNumber, sqsRecord } from "@mcp-pipeline/emulators/testing";
import type { KinesisStreamRecord, SQSRecord } from "aws-lambda";
import { describe, expect, it } from "vitest";
import {
  type BatchOutcome,
  InvalidBatchResponseError,
  type ItemOutcome,
  kinesisBatchResponse,
  sqsBatchResponse,
} from "../../src/index.js";

const ok: ItemOutcome = { status: "succeeded" };
const failed: ItemOutcome = { status: "failed", error: new Error("x"), cause: "transient" };
const notStarted: ItemOutcome = { status: "not-started", reason: "deadline" };

function outcomeOf<T>(items: T[], outcomes: ItemOutcome[]): BatchOutcome<T> {
  return {
    items,
    outcomes,
    counts: { succeeded: 0, "set-aside": 0, failed: 0, "not-started": 0 },
    deadlineReached: false,
  };
}
const kin = (n: number): KinesisStreamRecord[] =>
  Array.from({ length: n }, (_, i) => kinesisRecord({ partitionKey: "k", data: {}, sequence: i }));

describe("partial batch response builder (docs/aws-semantics.md §1.4 and §2.3: what Lambda reads as success or total failure)", () => {
  it("always writes the batchItemFailures key, so a success can never be misspelled", () => {
    expect(JSON.stringify(kinesisBatchResponse(outcomeOf(kin(2), [ok, ok])))).toBe(
      '{"batchItemFailures":[]}',
    );
    expect(JSON.stringify(sqsBatchResponse(outcomeOf([sqsRecord({ messageId: "a", body: "" })], [ok])))).toBe(
      '{"batchItemFailures":[]}',
    );
  });

  it("names only the lowest sequence number for Kinesis, since Lambda checkpoints there", () => {
    const response = kinesisBatchResponse(outcomeOf(kin(4), [ok, failed, notStarted, failed]));
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: sequenceNumber(1) }] });
  });

  it.each([
    ["an empty sequence number", ""],
    ["a sequence number missing from the record", undefined],
  ])("refuses %s, which Lambda would read as a total failure", (_name, seq) => {
    const records = kin(1).map((r) => ({ ...r, kinesis: { ...r.kinesis, sequenceNumber: seq as string } }));
    expect(() => kinesisBatchResponse(outcomeOf(records, [failed]))).toThrow(InvalidBatchResponseError);
  });

  it.each([
    ["an empty messageId", ""],
    ["a null messageId", null],
  ])("refuses %s for SQS", (_name, id) => {
    const records: SQSRecord[] = [{ ...sqsRecord({ messageId: "m", body: "" }), messageId: id as string }];
    expect(() => sqsBatchResponse(outcomeOf(records, [failed]))).toThrow(InvalidBatchResponseError);
  });

  it("refuses an outcome list that does not cover every record (the rest would be acknowledged unseen)", () => {
    expect(() => kinesisBatchResponse(outcomeOf(kin(3), [ok, ok]))).toThrow(/every record needs one/);
    expect(() => sqsBatchResponse(outcomeOf([sqsRecord({ messageId: "a", body: "" })], []))).toThrow(
      InvalidBatchResponseError,
    );
  });

  it("names the lowest sequence number needing redelivery even when the records are not in shard order", () => {
    // Lambda commits every record below the named sequence number (§1.4 "Checkpoint rule"). Given out of
    // order, the first record needing redelivery by position (sequence 2) is not the lowest: naming it
    // would commit the unstarted sequence 0 and lose it.
    const shuffled = [2, 0, 1].map((sequence) => kinesisRecord({ partitionKey: "k", data: {}, sequence }));
    const outcome = outcomeOf(shuffled, [failed, notStarted, ok]);
    expect(kinesisBatchResponse(outcome).batchItemFailures).toEqual([{ itemIdentifier: sequenceNumber(0) }]);
  });

  it("compares sequence numbers as numbers, not as text (a longer number is later)", () => {
    const short = kinesisRecord({ partitionKey: "k", data: {}, sequence: 9 });
    const long = {
      ...short,
      kinesis: { ...short.kinesis, sequenceNumber: `1${short.kinesis.sequenceNumber}` },
    };
    expect(kinesisBatchResponse(outcomeOf([long, short], [failed, failed])).batchItemFailures).toEqual([
      { itemIdentifier: short.kinesis.sequenceNumber },
    ]);
  });

  it("names every message that needs redelivery for SQS, in batch order", () => {
    const records = ["a", "b", "c", "d"].map((id) => sqsRecord({ messageId: id, body: "" }));
    expect(sqsBatchResponse(outcomeOf(records, [failed, ok, notStarted, ok]))).toEqual({
      batchItemFailures: [{ itemIdentifier: "a" }, { itemIdentifier: "c" }],
    });
  });
});
