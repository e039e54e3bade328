import type { ToolCallLifecycleEvent } from "@mcp-pipeline/contracts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ApplyChange, applyEvent, foldEvents, type ToolCallState } from "../../src/index.js";

const at = (s: number) => new Date(Date.UTC(2026, 10, 30, 10, 0, s)).toISOString();
const env = { specVersion: "1.0", sessionId: "s-1", callId: "c-1", tool: "search.web" } as const;
const events: ToolCallLifecycleEvent[] = [
  { ...env, eventId: "r", occurredAt: at(1), type: "tool_call.requested", argumentsDigest: "a".repeat(64) },
  { ...env, eventId: "s1", occurredAt: at(2), type: "tool_call.started", attempt: 1 },
  {
    ...env,
    eventId: "f1",
    occurredAt: at(3),
    type: "tool_call.failed",
    durationMs: 5,
    error: { code: "timeout", message: "slow", retryable: true },
  },
  { ...env, eventId: "s2", occurredAt: at(4), type: "tool_call.started", attempt: 2 },
  {
    ...env,
    eventId: "c",
    occurredAt: at(5),
    type: "tool_call.completed",
    durationMs: 9,
    result: { sizeBytes: 2, summary: "ok", location: { kind: "inline" } },
  },
];

/** The per-event path: one `applyEvent` (one write) per event. */
function oneByOne(current: ToolCallState | undefined, run: readonly ToolCallLifecycleEvent[]) {
  let state = current;
  const changes: ApplyChange[] = [];
  for (const e of run) {
    const applied = applyEvent(state, e);
    changes.push(applied.change);
    state = applied.state;
  }
  return { state, changes };
}

describe("foldEvents: a batch of one call's events folded before one write", () => {
  it("gives the same item, to the version and recent event ids, as applying the events one at a time", () => {
    const indices = fc.array(fc.integer({ min: 0, max: events.length - 1 }), { maxLength: 15 });
    fc.assert(
      fc.property(indices, indices, (before, batch) => {
        const pick = (is: number[]) => is.map((i) => events[i] as ToolCallLifecycleEvent);
        const current = oneByOne(undefined, pick(before)).state;
        const expected = oneByOne(current, pick(batch));
        const folded = foldEvents(current, pick(batch));
        expect(folded.state).toEqual(expected.state);
        expect(folded.changes).toEqual(expected.changes);
        expect(folded.changed).toBe(expected.changes.some((c) => c === "created" || c === "updated"));
      }),
    );
  });

  it("reports a redelivered run as no change: the very state read, nothing to write", () => {
    const current = foldEvents(undefined, events).state;
    const again = foldEvents(current, events);
    expect(again.changed).toBe(false);
    expect(again.state).toBe(current);
    expect(again.changes).toEqual(["duplicate", "duplicate", "duplicate", "duplicate", "duplicate"]);
  });

  it("refuses events of another call instead of merging two calls into one item", () => {
    const other = { ...events[1], callId: "c-2" } as ToolCallLifecycleEvent;
    expect(() => foldEvents(undefined, [events[0] as ToolCallLifecycleEvent, other])).toThrow(RangeError);
  });

  it("folds nothing into nothing", () => {
    expect(foldEvents(undefined, [])).toEqual({ state: undefined, changes: [], changed: false });
  });
});
