import { describe, expect, it } from "vitest";
import { BATCH_BACKOFF, READ_BACKOFF } from "../../src/esm/kinesis/poller.js";
import { scaledRetryWaits } from "../../src/pipeline/retry-waits.js";

describe("the local mappings' retry waits at the time scale", () => {
  it("divides the batch and read backoffs by the time scale, keeping their doubling and cap", () => {
    const waits = scaledRetryWaits(10);
    // 100 ms doubling to 5 s, in AWS time: 10, 20, 40 ... 500 ms at /10.
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(waits.retryDelayMs)).toEqual([10, 20, 40, 80, 160, 320, 500, 500]);
    expect([1, 2, 3, 7, 20].map(waits.readRetryDelayMs)).toEqual([10, 20, 40, 500, 500]);
    expect(BATCH_BACKOFF).toEqual({ baseMs: 100, capMs: 5_000 });
    expect(READ_BACKOFF).toEqual({ baseMs: 100, capMs: 5_000 });
  });

  it("waits the poller's own backoff at time scale 1", () => {
    const waits = scaledRetryWaits(1);
    expect([1, 2, 6, 7].map(waits.retryDelayMs)).toEqual([100, 200, 3_200, 5_000]);
  });

  it("never waits less than 1 ms, however compressed the time", () => {
    const waits = scaledRetryWaits(1_000);
    expect(waits.retryDelayMs(1)).toBe(1);
    expect(waits.readRetryDelayMs(1)).toBe(1);
  });

  it("refuses a time scale that is not a number above 0", () => {
    for (const scale of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => scaledRetryWaits(scale)).toThrow(RangeError);
    }
  });
});
