/** What a PutRecords answer says about each entry, and which failed requests are worth sending again. */
import { describe, expect, it } from "vitest";
import { entryOutcomes, isRetryableRequestError } from "../../src/put-request.js";

describe("entryOutcomes", () => {
  it("reads the answer in the request's order, by the records' input indices", () => {
    const outcomes = entryOutcomes(
      [4, 7],
      [
        { ShardId: "shardId-000000000001", SequenceNumber: "11" },
        { ErrorCode: "ProvisionedThroughputExceededException", ErrorMessage: "Rate exceeded for shard" },
      ],
    );
    expect(outcomes).toEqual([
      { index: 4, written: true, shardId: "shardId-000000000001", sequenceNumber: "11" },
      {
        index: 7,
        written: false,
        error: { code: "ProvisionedThroughputExceededException", message: "Rate exceeded for shard" },
      },
    ]);
  });

  it("counts an entry as written only with a shard, a sequence number and no error code", () => {
    const outcomes = entryOutcomes(
      [0, 1, 2],
      [
        { ShardId: "shardId-000000000000" },
        { SequenceNumber: "12" },
        { ShardId: "shardId-000000000000", SequenceNumber: "13", ErrorCode: "InternalFailure" },
      ],
    );
    expect(outcomes.map((o) => o.written)).toEqual([false, false, false]);
    expect(outcomes.map((o) => (o.written ? "" : o.error.code))).toEqual([
      "MissingResult",
      "MissingResult",
      "InternalFailure",
    ]);
  });

  it("names an entry the answer has no result for (a short or missing Records) MissingResult, never written", () => {
    expect(entryOutcomes([0, 1], [{ ShardId: "shardId-000000000000", SequenceNumber: "1" }])[1]).toEqual({
      index: 1,
      written: false,
      error: { code: "MissingResult", message: "no result for this entry in the response" },
    });
    expect(entryOutcomes([5], undefined)).toEqual([
      {
        index: 5,
        written: false,
        error: { code: "MissingResult", message: "no result for this entry in the response" },
      },
    ]);
  });
});

describe("isRetryableRequestError", () => {
  const withStatus = (name: string, httpStatusCode?: number) =>
    Object.assign(new Error(name), { name, $metadata: { httpStatusCode } });

  it("retries throttles, 5xx, 429 and errors without a status (the network)", () => {
    expect(isRetryableRequestError(withStatus("ProvisionedThroughputExceededException", 400))).toBe(true);
    expect(isRetryableRequestError(withStatus("KMSThrottlingException", 400))).toBe(true);
    expect(isRetryableRequestError(withStatus("InternalFailure", 500))).toBe(true);
    expect(isRetryableRequestError(withStatus("LimitExceededException", 429))).toBe(true);
    expect(isRetryableRequestError(new Error("socket hang up"))).toBe(true);
  });

  it("gives up on a refusal that can only repeat (a missing stream, a denial, a malformed request)", () => {
    expect(isRetryableRequestError(withStatus("ResourceNotFoundException", 400))).toBe(false);
    expect(isRetryableRequestError(withStatus("AccessDeniedException", 400))).toBe(false);
    expect(isRetryableRequestError(withStatus("ValidationException", 400))).toBe(false);
  });
});
