import { describe, expect, it } from "vitest";
import { refusedForTheMoment, runAgainWhileRefused } from "../../src/operator-retry.js";

/** An S3 error as the SDK throws it: a name and the HTTP status in $metadata. */
const s3Error = (name: string, status: number) =>
  Object.assign(new Error(`${name}: injected by npm run chaos`), {
    name,
    $metadata: { httpStatusCode: status },
  });

const noWait = async () => {};

describe("the operator's command, run again while the service refuses it for the moment", () => {
  it("runs a command S3 keeps throttling again until it succeeds, however many times that takes", async () => {
    let runs = 0;
    const retried: number[] = [];
    const result = await runAgainWhileRefused(
      async () => {
        runs += 1;
        // More refusals than the five tries that ended a 10,000-event run with a raw SlowDown.
        if (runs <= 7) throw s3Error("SlowDown", 503);
        return "replayed";
      },
      { moving: () => true, sleep: noWait, onRetry: (_, attempt) => retried.push(attempt) },
    );
    expect(result).toBe("replayed");
    expect(runs).toBe(8);
    expect(retried).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it("sees the refusal inside the replay's own error (ReplayIncompleteError keeps S3's as its cause)", () => {
    const wrapped = new Error("3 records were not put back (SlowDown)", { cause: s3Error("SlowDown", 503) });
    expect(refusedForTheMoment(wrapped)).toBe(true);
    expect(refusedForTheMoment(s3Error("InternalError", 500))).toBe(true);
    expect(refusedForTheMoment(s3Error("ProvisionedThroughputExceededException", 400))).toBe(true);
    expect(refusedForTheMoment(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }))).toBe(
      true,
    );
    expect(refusedForTheMoment(s3Error("AccessDenied", 403))).toBe(false);
    expect(refusedForTheMoment(new TypeError("x is undefined"))).toBe(false);
  });

  it("fails at once on a refusal for good: running it again changes nothing", async () => {
    let runs = 0;
    const denied = s3Error("AccessDenied", 403);
    await expect(
      runAgainWhileRefused(
        async () => {
          runs += 1;
          throw denied;
        },
        { moving: () => true, sleep: noWait },
      ),
    ).rejects.toBe(denied);
    expect(runs).toBe(1);
  });

  it("stops running it again once the run is out of time, without ending the run with the service's error", async () => {
    let moving = true;
    let runs = 0;
    const result = await runAgainWhileRefused(
      async () => {
        runs += 1;
        if (runs === 3) moving = false;
        throw s3Error("SlowDown", 503);
      },
      { moving: () => moving, sleep: noWait },
    );
    expect(result).toBeUndefined();
    expect(runs).toBe(3);
  });
});
