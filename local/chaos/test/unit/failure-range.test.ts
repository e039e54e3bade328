import { describe, expect, it } from "vitest";
import { failureRangeOf } from "../../src/failure-range.js";

describe("the range a failure record names", () => {
  it("is its KinesisBatchInfo's shard, start and end (§1.6)", () => {
    const body = JSON.stringify({
      requestContext: { condition: "RecordAgeExceeded", approximateInvokeCount: 1 },
      KinesisBatchInfo: {
        shardId: "shardId-000000000001",
        startSequenceNumber: "101",
        endSequenceNumber: "109",
      },
    });
    expect(failureRangeOf(body)).toEqual({ shardId: "shardId-000000000001", start: "101", end: "109" });
  });

  it.each([
    ["not JSON", "{not json"],
    ["JSON null", "null"],
    ["a job, not a failure record", JSON.stringify({ callId: "c-1" })],
    [
      "a range without its end",
      JSON.stringify({ KinesisBatchInfo: { shardId: "s", startSequenceNumber: "1" } }),
    ],
    [
      "a sequence number that is not a string",
      JSON.stringify({ KinesisBatchInfo: { shardId: "s", startSequenceNumber: 1, endSequenceNumber: "2" } }),
    ],
  ])("is none for %s", (_case, body) => {
    expect(failureRangeOf(body)).toBeUndefined();
  });
});
