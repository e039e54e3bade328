import { buildScenario, type StreamItem } from "@mcp-pipeline/local-runtime";
import { applyEvent, type ToolCallState } from "@mcp-pipeline/tool-calls";
import { describe, expect, it } from "vitest";
import { putEventOf } from "../../src/ledger.js";
import {
  compareJobCall,
  compareStreamCall,
  expectedCall,
  type PutEvent,
  type TableItem,
} from "../../src/oracle.js";

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();
const requested: PutEvent = { eventId: "r", callId: "c", type: "tool_call.requested", occurredAt: at(0) };
const started1: PutEvent = {
  eventId: "s1",
  callId: "c",
  type: "tool_call.started",
  occurredAt: at(1),
  attempt: 1,
};
const started2: PutEvent = {
  eventId: "s2",
  callId: "c",
  type: "tool_call.started",
  occurredAt: at(2),
  attempt: 2,
};
const completed: PutEvent = { eventId: "t", callId: "c", type: "tool_call.completed", occurredAt: at(3) };

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

/** The product's fold of the scenario's events, in an order: what the processor would write. */
function foldInOrder(items: readonly StreamItem[]): ToolCallState | undefined {
  let state: ToolCallState | undefined;
  for (const item of items) {
    const event = JSON.parse(Buffer.from(item.data).toString("utf8"));
    state = applyEvent(state, event).state;
  }
  return state;
}

describe("the oracle (an independent model of a call's item)", () => {
  it("decides by the first terminal event, else the later event of the higher phase", () => {
    expect(expectedCall([requested, started1, started2, completed])).toMatchObject({
      status: "completed",
      statusEventId: "t",
      requestedAt: at(0),
      startedAt: at(1),
      finishedAt: at(3),
      attempts: 2,
    });
    expect(expectedCall([started2, requested, started1])).toMatchObject({
      status: "started",
      statusEventId: "s2",
      finishedAt: undefined,
    });
    expect(expectedCall([requested])).toMatchObject({
      status: "requested",
      attempts: 0,
      startedAt: undefined,
    });
    const failed: PutEvent = { ...completed, eventId: "f", type: "tool_call.failed", retryable: false };
    expect(expectedCall([requested, failed, { ...completed, occurredAt: at(4) }])).toMatchObject({
      status: "failed",
      statusEventId: "f",
    });
  });

  it("agrees with the product's fold on every call of the lifecycle scenario, in every order its events can arrive", () => {
    // The premise of judging versions and event lists: every event of a scenario call changes its item,
    // whatever came before it. Checked for each call shape against the fold the processor runs.
    const scenario = buildScenario({
      events: 400,
      jobs: 0,
      fifoJobs: 0,
      sessions: 4,
      poisonRate: 0,
      transientRate: 0,
      duplicateRate: 0,
      seed: 3,
      lifecycle: true,
    });
    const byCall = new Map<string, StreamItem[]>();
    for (const item of scenario.stream) {
      if (item.kind === "poison") continue;
      byCall.set(item.callId, [...(byCall.get(item.callId) ?? []), item]);
    }
    const shapes = new Map<string, StreamItem[]>();
    for (const items of byCall.values())
      shapes.set(items.map((i) => i.kind !== "poison" && i.type).join(","), items);
    expect(shapes.size).toBeGreaterThanOrEqual(4);
    for (const items of shapes.values()) {
      const expected = expectedCall(items.map((i) => putEventOf(i.data) as PutEvent));
      for (const order of permutations(items)) {
        expect(compareStreamCall(expected, foldInOrder(order) as unknown as TableItem)).toEqual([]);
      }
    }
  });

  it("names every field of an item that differs from the model", () => {
    const expected = expectedCall([requested, started1, completed]);
    const right: TableItem = {
      callId: "c",
      status: "completed",
      statusEvent: { eventId: "t" },
      requestedAt: at(0),
      startedAt: at(1),
      finishedAt: at(3),
      attempts: 1,
      version: 3,
      recentEventIds: ["r", "s1", "t"],
    };
    expect(compareStreamCall(expected, right)).toEqual([]);
    expect(compareStreamCall(expected, undefined)).toEqual(["no item"]);
    expect(
      compareStreamCall(expected, {
        ...right,
        recentEventIds: ["r", "t"],
        version: 2,
        startedAt: undefined,
        attempts: 0,
      }),
    ).toEqual([
      'startedAt undefined, expected "2026-01-01T00:00:00.001Z"',
      "attempts 0, expected 1",
      "events not applied: s1",
      "version (events that changed it) 2, expected 3",
    ]);
    expect(
      compareStreamCall(expected, { ...right, status: "started", statusEvent: { eventId: "s1" } }),
    ).toEqual(['status "started", expected "completed"', 'deciding event "s1", expected "t"']);
    expect(
      compareStreamCall(expected, { ...right, recentEventIds: ["r", "s1", "t", "x"], version: 4 }),
    ).toEqual(["events nobody put: x", "version (events that changed it) 4, expected 3"]);
  });

  it("holds a job's call to the witness's outcome and to the producer's request", () => {
    const expected = { status: "completed", requestedEventId: "req-job-1", requestedAt: at(0) } as const;
    const item: TableItem = {
      callId: "job-1",
      status: "completed",
      requestedAt: at(0),
      recentEventIds: ["req-job-1", "w1"],
    };
    expect(compareJobCall(expected, item)).toEqual([]);
    expect(
      compareJobCall(expected, {
        ...item,
        status: "dead-lettered",
        recentEventIds: ["w1"],
        requestedAt: undefined,
      }),
    ).toEqual([
      'status "dead-lettered", expected "completed"',
      'requestedAt undefined, expected "2026-01-01T00:00:00.000Z"',
      "the producer's request req-job-1 not applied",
    ]);
  });
});
