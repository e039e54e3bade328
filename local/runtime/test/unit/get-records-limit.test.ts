import { describe, expect, it } from "vitest";
import { getRecordsLimit } from "../../src/esm/kinesis/poller.js";

// §9.1 item 2: a read asks for a round of batches in every lane twice over, at least 1,000 records,
// never more than the 10,000 GetRecords allows.
describe("getRecordsLimit", () => {
  it("asks dev's mapping (batch 100, parallelization 2) for 1,000 records: the floor", () => {
    expect(getRecordsLimit({ batchSize: 100, parallelizationFactor: 2 })).toBe(1_000);
  });

  it("asks for two rounds of batches when that is more than the floor", () => {
    expect(getRecordsLimit({ batchSize: 300, parallelizationFactor: 5 })).toBe(3_000);
  });

  it("never asks for more than GetRecords' 10,000", () => {
    expect(getRecordsLimit({ batchSize: 10_000, parallelizationFactor: 10 })).toBe(10_000);
  });

  it("counts a parallelization factor below 1 as one lane", () => {
    expect(getRecordsLimit({ batchSize: 2_000, parallelizationFactor: 0 })).toBe(4_000);
  });
});
