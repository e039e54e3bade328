import type { ToolCallLifecycleEvent } from "@mcp-pipeline/contracts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyEvent, type CallEvent, type ToolCallState } from "../../src/index.js";

const at = (s: number) => new Date(Date.UTC(2026, 10, 30, 10, 0, s)).toISOString();
const env = { specVersion: "1.0", sessionId: "s-1", callId: "c-1", tool: "search.web" } as const;
const requested = (id: string, s: number): ToolCallLifecycleEvent => ({
  ...env,
  eventId: id,
  occurredAt: at(s),
  type: "tool_call.requested",
  argumentsDigest: "a".repeat(64),
});
const started = (id: string, s: number, attempt = 1): ToolCallLifecycleEvent => ({
  ...env,
  eventId: id,
  occurredAt: at(s),
  type: "tool_call.started",
  attempt,
});
const completed = (id: string, s: number): ToolCallLifecycleEvent => ({
  ...env,
  eventId: id,
  occurredAt: at(s),
  type: "tool_call.completed",
  durationMs: 1200,
  result: { sizeBytes: 10, summary: "ok", location: { kind: "inline" } },
});
const failed = (id: string, s: number, retryable: boolean): ToolCallLifecycleEvent => ({
  ...env,
  eventId: id,
  occurredAt: at(s),
  type: "tool_call.failed",
  durationMs: 900,
  error: { code: "timeout", message: "tool timed out", retryable },
});

const DLQ = "https://sqs.us-east-1.amazonaws.com/123456789012/tool-jobs-dlq";
const deadLettered = (id: string, s: number, attempt = 3): CallEvent => ({
  ...env,
  eventId: id,
  occurredAt: at(s),
  type: "tool_call.dead_lettered",
  attempt,
  deadLetterQueue: DLQ,
  error: { code: "downstream-5xx", message: "HTTP 503" },
});

const fold = (events: CallEvent[]): ToolCallState | undefined =>
  events.reduce<ToolCallState | undefined>((state, e) => applyEvent(state, e).state, undefined);

/** Every event at least once, then random repetitions, in a random order: the fold must not care. */
function expectOrderAndRepetitionFree(events: CallEvent[]): void {
  const reference = content(fold(events));
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: events.length - 1 }), { minLength: 1, maxLength: 20 }),
      (picks) => {
        const sequence = fc.sample(
          fc.shuffledSubarray([...events, ...picks.map((i) => events[i] as CallEvent)], {
            minLength: events.length + picks.length,
          }),
          { numRuns: 1, seed: picks.length },
        )[0] as CallEvent[];
        expect(content(fold(sequence))).toEqual(reference);
      },
    ),
    { numRuns: 200, seed: 7 },
  );
}
const content = (s: ToolCallState | undefined) => {
  if (!s) return s;
  const { version: _v, recentEventIds: _r, ...rest } = s;
  return rest;
};

describe("a call's state is the join of its events", () => {
  it("materialises the lifecycle with timestamps, tool, duration and result", () => {
    const state = fold([requested("e1", 0), started("e2", 1), completed("e3", 3)]);
    expect(state).toMatchObject({
      callId: "c-1",
      sessionId: "s-1",
      tool: "search.web",
      status: "completed",
      requestedAt: at(0),
      startedAt: at(1),
      finishedAt: at(3),
      durationMs: 1200,
      attempts: 1,
      result: { summary: "ok" },
      version: 3,
    });
  });

  it.each([
    [
      "a late start after completion",
      [requested("e1", 0), completed("e3", 3), started("e2", 1)],
      "completed",
    ],
    [
      "a retry failure after completion",
      [started("e2", 1), completed("e3", 3), failed("e4", 5, true)],
      "completed",
    ],
    ["a completion after a permanent failure", [failed("e4", 2, false), completed("e3", 3)], "failed"],
    [
      "a stale retry failure after the next attempt started",
      [started("s2", 4, 2), failed("f1", 2, true)],
      "started",
    ],
    [
      "a retry then the next attempt",
      [started("s1", 1), failed("f1", 2, true), started("s2", 4, 2)],
      "started",
    ],
    ["a requested event after start", [started("e2", 1), requested("e1", 0)], "started"],
  ])("never moves backwards: %s", (_name, events, status) => {
    expect(fold(events)?.status).toBe(status);
  });

  it("keeps the error of a permanent failure and the attempt count of retries", () => {
    const state = fold([
      started("s1", 1),
      failed("f1", 2, true),
      started("s2", 3, 2),
      failed("f2", 4, false),
    ]);
    expect(state).toMatchObject({
      status: "failed",
      attempts: 2,
      error: { retryable: false },
      finishedAt: at(4),
    });
  });

  it("recognises a duplicate event by id and changes nothing", () => {
    const first = applyEvent(undefined, started("e2", 1));
    const again = applyEvent(first.state, started("e2", 1));
    expect(again.change).toBe("duplicate");
    expect(again.state).toBe(first.state);
  });

  it("reports an event that adds nothing as unchanged, so no write is needed", () => {
    const state = fold([requested("e1", 0), completed("e3", 3)]);
    expect(applyEvent(state, requested("e1-retry", 2)).change).toBe("unchanged");
  });

  it("gives the same state for any order and repetition of the same events", () => {
    expectOrderAndRepetitionFree([
      requested("r1", 0),
      started("s1", 1, 1),
      failed("f1", 2, true),
      started("s2", 3, 2),
      completed("c1", 5),
      failed("f2", 5, false),
      requested("r2", 0),
    ]);
  });
});

describe("a call that left the pipeline for the DLQ says so, until a redriven attempt moves it on (issue 14, item 4)", () => {
  // Attempts 1-3 fail transiently; the third is the queue's maxReceiveCount, so SQS dead-letters the job.
  const toTheDlq = [
    requested("r1", 0),
    started("s1", 1, 1),
    failed("f1", 2, true),
    started("s2", 3, 2),
    failed("f2", 4, true),
    started("s3", 5, 3),
    failed("f3", 6, true),
    deadLettered("d3", 6, 3),
  ];

  it("is dead-lettered, with the queue, the attempt and the last error, not retrying forever", () => {
    expect(fold(toTheDlq)).toMatchObject({
      status: "dead-lettered",
      attempts: 3,
      deadLetter: { queue: DLQ, attempt: 3, at: at(6) },
      error: { code: "downstream-5xx", retryable: true },
    });
  });

  it.each([
    ["the last failure of the same instant, applied after", [...toTheDlq, failed("f3", 6, true)]],
    ["a stale start of an earlier attempt", [...toTheDlq, started("s2-copy", 3, 2)]],
  ])("stays dead-lettered after %s", (_name, events) => {
    expect(fold(events)?.status).toBe("dead-lettered");
  });

  it("a redriven job's next attempt supersedes it, and its outcome ends the call", () => {
    // Redriven messages are new messages (docs/aws-semantics.md §4): the receive count starts again at 1.
    const redriven = fold([...toTheDlq, started("s1-redrive", 9, 1)]);
    expect(redriven).toMatchObject({ status: "started", attempts: 3 });
    expect(redriven).not.toHaveProperty("deadLetter");
    expect(fold([...toTheDlq, started("s1-redrive", 9, 1), completed("c-redrive", 10)])).toMatchObject({
      status: "completed",
      finishedAt: at(10),
    });
    expect(fold([...toTheDlq, started("s1-redrive", 9, 1), failed("f-redrive", 10, true)])?.status).toBe(
      "retrying",
    );
  });

  it("never displaces a finished call, whatever the order", () => {
    expect(fold([completed("c1", 4), ...toTheDlq])?.status).toBe("completed");
    expect(fold([...toTheDlq, failed("p1", 4, false)])?.status).toBe("failed");
  });

  it.each([
    ["dead-lettered", toTheDlq],
    [
      "redriven, then dead-lettered again",
      [
        ...toTheDlq,
        started("s1-redrive", 9, 1),
        failed("f-redrive", 10, true),
        deadLettered("d-redrive", 10, 1),
      ],
    ],
    ["redriven and completed", [...toTheDlq, started("s1-redrive", 9, 1), completed("c-redrive", 10)]],
  ])("the fold stays a join (order and repetition free): %s", (_name, events) => {
    expectOrderAndRepetitionFree(events);
  });
});

describe("the inline result text (output) travels with the worker's completed event", () => {
  it("is stored with the completed event and survives later events and the processor's copy", () => {
    const withOutput = applyEvent(
      fold([requested("e1", 0), started("e2", 1)]),
      completed("e3", 3),
      '{"n":1}',
    );
    expect(withOutput.state.output).toBe('{"n":1}');
    // The processor applies the same event from the stream without the text: nothing changes.
    expect(applyEvent(withOutput.state, completed("e3", 3)).change).toBe("duplicate");
    // Even once the event id has left the recent list, the same event does not take the status again.
    const forgotten = { ...withOutput.state, recentEventIds: [] };
    expect(applyEvent(forgotten, completed("e3", 3)).state.output).toBe('{"n":1}');
    // A late retry's start or failure does not displace a finished call's result.
    const late = [started("e4", 9, 2), failed("e5", 10, true)].reduce(
      (s, e) => applyEvent(s, e).state,
      withOutput.state,
    );
    expect(late).toMatchObject({ status: "completed", output: '{"n":1}' });
  });

  it("is dropped when an earlier terminal event wins, and ignored for results stored in S3", () => {
    const winner = fold([failed("e1", 2, false)]);
    expect(applyEvent(winner, completed("e2", 3), '{"n":1}').state).not.toHaveProperty("output");
    const inS3: ToolCallLifecycleEvent = {
      ...completed("e3", 3),
      result: { sizeBytes: 500_000, summary: "big", location: { kind: "s3", bucket: "results", key: "k" } },
    } as ToolCallLifecycleEvent;
    expect(applyEvent(undefined, inS3, "{}").state).not.toHaveProperty("output");
  });
});
