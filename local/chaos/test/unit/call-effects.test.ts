import { describe, expect, it } from "vitest";
import { CallEffects } from "../../src/call-effects.js";
import { type CallWrite, callWritesOf } from "../../src/doors.js";

const write = (version: number, eventIds: string[], status = "started", claimToken?: string): CallWrite => ({
  callId: "c",
  version,
  eventIds,
  status,
  statusEventId: eventIds.at(-1) ?? "",
  ...(claimToken !== undefined ? { claimToken } : {}),
});

describe("the calls' effects, as the door saw the writes", () => {
  it("reads the order events were applied from the writes in version order, whatever order their answers came in", () => {
    const effects = new CallEffects();
    effects.record(write(4, ["a", "b", "c", "d"], "completed"), 3);
    effects.record(write(2, ["a", "b"]), 1);
    effects.record(write(1, ["a"], "requested"), 2);

    expect(effects.applicationOrder("c")).toEqual(["a", "b", "c", "d"]);
    expect(effects.applied("d")).toBe(true);
    expect(effects.applied("x")).toBe(false);
    expect(effects.finished("c")).toBe(true);
    expect(effects.regressions().count).toBe(0);
  });

  it("finds a write over state it did not read (a lost update), an event added twice and a version that does not count the events", () => {
    const lost = new CallEffects();
    lost.record(write(2, ["a", "b"]), 0);
    // Written from an older read: b is gone.
    lost.record(write(3, ["a", "c"]), 0);
    expect(lost.regressions().examples).toEqual([
      { callId: "c", version: 3, problem: "dropped b that version 2 had" },
    ]);

    const twice = new CallEffects();
    twice.record(write(2, ["a", "a"]), 0);
    expect(twice.regressions().examples[0]?.problem).toBe("an event id twice in one item");

    const skipped = new CallEffects();
    skipped.record(write(1, ["a"]), 0);
    skipped.record(write(3, ["a", "b"]), 0);
    expect(skipped.regressions().examples[0]?.problem).toBe("version 1 -> 3 for 1 new events");
  });

  it("a worker's claim registered again over a start it already folded raises the version by one, as the fencing needs (docs/idempotency.md)", () => {
    // Two deliveries of one job at the same receive count (a producer's second send): the second claim
    // registers itself with a `started` whose id the item has; ToolCallStore.claimCall still bumps the
    // version, so that a late outcome write of the first claim fails its condition.
    const effects = new CallEffects();
    effects.record(write(1, ["req"], "requested"), 0);
    effects.record(write(2, ["req", "started-1"], "started", "claim-a"), 0);
    effects.record(write(3, ["req", "started-1"], "started", "claim-b"), 0);
    effects.record(write(4, ["req", "started-1", "completed"], "completed", "claim-b"), 0);
    expect(effects.regressions().count).toBe(0);

    // The same bump without a new claim is a version that does not count the events.
    const bumped = new CallEffects();
    bumped.record(write(2, ["req", "started-1"], "started", "claim-a"), 0);
    bumped.record(write(3, ["req", "started-1"], "started", "claim-a"), 0);
    expect(bumped.regressions().examples).toEqual([
      { callId: "c", version: 3, problem: "version 2 -> 3 for 0 new events" },
    ]);
    // Nor may a new claim hide a second skipped version.
    const skipped = new CallEffects();
    skipped.record(write(2, ["req", "started-1"], "started", "claim-a"), 0);
    skipped.record(write(4, ["req", "started-1"], "started", "claim-b"), 0);
    expect(skipped.regressions().examples).toEqual([
      { callId: "c", version: 4, problem: "version 2 -> 4 for 0 new events" },
    ]);
  });

  it("keeps the fold's window of 32 event ids: the oldest cut at the front is no regression", () => {
    const effects = new CallEffects();
    const ids = Array.from({ length: 33 }, (_, i) => `e${i}`);
    effects.record(write(32, ids.slice(0, 32)), 0);
    effects.record(write(33, ids.slice(1, 33)), 0);
    expect(effects.regressions().count).toBe(0);
  });

  it("the door reads the claim registered on a written item, as the product marshals it", () => {
    const body = JSON.stringify({
      TableName: "calls",
      Item: {
        callId: { S: "c" },
        version: { N: "3" },
        status: { S: "started" },
        recentEventIds: { L: [{ S: "req" }, { S: "started-1" }] },
        statusEvent: { M: { eventId: { S: "started-1" } } },
        claim: { M: { token: { S: "claim-b" }, leaseExpiresAt: { N: "1" } } },
      },
    });
    expect(callWritesOf("DynamoDB_20120810.PutItem", body, "calls")).toEqual([
      write(3, ["req", "started-1"], "started", "claim-b"),
    ]);
  });
});
