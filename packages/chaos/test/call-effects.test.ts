import { describe, expect, it } from "vitest";
import { CallEffects } from "../src/call-effects.js";
import type { CallWrite } from "../src/doors.js";

const write = (version: number, eventIds: string[], status = "started"): CallWrite => ({
  callId: "c",
  version,
  eventIds,
  status,
  statusEventId: eventIds.at(-1) ?? "",
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

  it("keeps the fold's window of 32 event ids: the oldest cut at the front is no regression", () => {
    const effects = new CallEffects();
    const ids = Array.from({ length: 33 }, (_, i) => `e${i}`);
    effects.record(write(32, ids.slice(0, 32)), 0);
    effects.record(write(33, ids.slice(1, 33)), 0);
    expect(effects.regressions().count).toBe(0);
  });
});
