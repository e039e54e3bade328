// requestDeadlines: the stages of the deadline margin as abort signals. The remaining time is scripted and
// chosen so that each stage has either ended already (its signal aborted at once) or lies far ahead (its
// timer never fires during the test): nothing waits for a timer.
import { describe, expect, it, vi } from "vitest";
import {
  DeadlineStage,
  deadlineErrorOf,
  InvocationDeadlineError,
  MARGIN_SHARE,
  requestDeadlines,
} from "../../src/index.js";

const remaining = (ms: number) => ({ getRemainingTimeInMillis: () => ms });

describe("requestDeadlines: the deadline margin shared out as abort signals", () => {
  it("shares half the margin for the requests in flight and a quarter for the bookkeeping", () => {
    expect(MARGIN_SHARE).toEqual({ requests: 0.5, settle: 0.25 });
  });

  it("with an hour left, neither stage has ended; the requests end half the margin before the invocation", () => {
    const deadlines = requestDeadlines(remaining(3_600_000), 4_000);
    try {
      expect(deadlines.requests.aborted).toBe(false);
      expect(deadlines.settle.aborted).toBe(false);
      expect(deadlines.requestsLeftMs()).toBe(3_598_000);
    } finally {
      deadlines.dispose();
    }
  });

  it("inside the requests' share: their signal is aborted at once, with the stage and its reserve; the bookkeeping's is not", () => {
    const deadlines = requestDeadlines(remaining(1_500), 4_000);
    try {
      expect(deadlines.requests.aborted).toBe(true);
      expect(deadlines.requests.reason).toBeInstanceOf(InvocationDeadlineError);
      expect(deadlines.requests.reason).toMatchObject({
        kind: "transient",
        code: "invocation-deadline",
        stage: DeadlineStage.Requests,
        reserveMs: 2_000,
      });
      expect(deadlines.settle.aborted).toBe(false);
    } finally {
      deadlines.dispose();
    }
  });

  it("inside the answer's share: both signals are aborted", () => {
    const deadlines = requestDeadlines(remaining(500), 4_000);
    expect([deadlines.requests.aborted, deadlines.settle.aborted]).toEqual([true, true]);
    expect(deadlines.settle.reason).toMatchObject({ stage: DeadlineStage.Settle, reserveMs: 1_000 });
    deadlines.dispose();
  });

  it.each([
    ["a negative margin", -1],
    ["a margin that is not a number", Number.NaN],
    ["an infinite margin", Number.POSITIVE_INFINITY],
  ])("refuses %s with a RangeError", (_name, margin) => {
    expect(() => requestDeadlines(remaining(10_000), margin)).toThrow(
      new RangeError(`deadline margin must be a finite number of milliseconds >= 0, got ${margin}`),
    );
  });
});

describe("requestDeadlines: what the context says of the remaining time", () => {
  it("a negative remaining time (past the deadline): both stages have ended, no error", () => {
    const deadlines = requestDeadlines(remaining(-5), 1_000);
    expect([deadlines.requests.aborted, deadlines.settle.aborted]).toEqual([true, true]);
    expect(deadlines.requestsLeftMs()).toBe(-505);
    deadlines.dispose();
  });

  // Node runs a timer whose delay it cannot hold (over 2^31 - 1 ms, or Infinity) after 1 ms; vitest's fake
  // timers do the same, so these run on them and wait for nothing.
  it("no deadline (Infinity): neither stage ever ends", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    try {
      const deadlines = requestDeadlines(remaining(Number.POSITIVE_INFINITY), 1_000);
      vi.advanceTimersByTime(2 ** 32);
      expect([deadlines.requests.aborted, deadlines.settle.aborted]).toEqual([false, false]);
      expect(deadlines.requestsLeftMs()).toBe(Number.POSITIVE_INFINITY);
      deadlines.dispose();
    } finally {
      vi.useRealTimers();
    }
  });

  it("more remaining time than a timer can hold: each stage still ends at its share of the margin, not at once", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    try {
      const start = Date.now();
      const total = 2 ** 31 + 60_000;
      const deadlines = requestDeadlines(
        { getRemainingTimeInMillis: () => total - (Date.now() - start) },
        1_000,
      );
      vi.advanceTimersByTime(60_000);
      expect(deadlines.requests.aborted).toBe(false);
      // The requests end when 500 ms remain, the bookkeeping when 250 ms do.
      vi.advanceTimersByTime(total - 60_000 - 501);
      expect(deadlines.requests.aborted).toBe(false);
      vi.advanceTimersByTime(1);
      expect([deadlines.requests.aborted, deadlines.settle.aborted]).toEqual([true, false]);
      vi.advanceTimersByTime(250);
      expect(deadlines.settle.aborted).toBe(true);
      deadlines.dispose();
    } finally {
      vi.useRealTimers();
    }
  });

  it.each([
    ["not a number", Number.NaN],
    ["not a number type", "3000" as unknown as number],
  ])("a remaining time that is %s is refused with a RangeError naming it", (_name, ms) => {
    expect(() => requestDeadlines(remaining(ms), 1_000)).toThrow(
      new RangeError(
        `getRemainingTimeInMillis() must return a number of milliseconds, got ${typeof ms} ${String(ms)}`,
      ),
    );
  });

  it("a context without getRemainingTimeInMillis is refused with a TypeError that says what is needed", () => {
    expect(() => requestDeadlines({} as unknown as { getRemainingTimeInMillis(): number }, 1_000)).toThrow(
      new TypeError("requestDeadlines needs the invocation's context, with getRemainingTimeInMillis()"),
    );
  });
});

describe("deadlineErrorOf: the error a record reports when its request was aborted by the deadline", () => {
  const aborted = requestDeadlines(remaining(0), 1_000).requests;
  const sdkAbort = Object.assign(new Error("Request aborted"), { name: "AbortError" });

  it("an SDK AbortError under an aborted deadline becomes InvocationDeadlineError, with the SDK's error as its cause", () => {
    const error = deadlineErrorOf(sdkAbort, aborted);
    expect(error).toBeInstanceOf(InvocationDeadlineError);
    expect(error).toMatchObject({ stage: DeadlineStage.Requests, reserveMs: 500, cause: sdkAbort });
  });

  it("an error of a call that names the deadline's abort as its cause (putAllRecords) becomes InvocationDeadlineError too", () => {
    const incomplete = new Error("1 of 1 records not written", { cause: aborted.reason });
    expect(deadlineErrorOf(incomplete, aborted)).toMatchObject({
      name: "InvocationDeadlineError",
      cause: incomplete,
    });
  });

  it("leaves every other error as it is: another error, or an abort while the deadline still runs", () => {
    const other = new Error("ConditionalCheckFailedException");
    expect(deadlineErrorOf(other, aborted)).toBe(other);
    const running = requestDeadlines(remaining(3_600_000), 1_000);
    expect(deadlineErrorOf(sdkAbort, running.requests)).toBe(sdkAbort);
    running.dispose();
  });
});
