// The processor bounds its DynamoDB requests by the invocation's deadline (requestDeadlines in
// @mcp-pipeline/batch), as the workers do: a call's write that never answers is aborted, its records fail
// transiently, and the checkpoint stops at the first of them (§1.4 "Checkpoint rule") instead of the
// invocation timing out and the whole batch coming back (§1.3 "During invocation").
import type { RequestOptions } from "@mcp-pipeline/aws";
import { InvocationDeadlineError, ItemStatus, NotStartedReason } from "@mcp-pipeline/batch";
import type { ToolCallLifecycleEvent } from "@mcp-pipeline/contracts";
import { kinesisRecord, lambdaContext, untilAborted } from "@mcp-pipeline/emulators/testing";
import type { CallCache, Folded, ToolCallStore } from "@mcp-pipeline/tool-calls";
import { describe, expect, it } from "vitest";
import { type ProcessorDeps, processToolCallEvents } from "../../src/core.js";
import { startedRecords } from "../stack.js";

/**
 * The store's two calls, faked: every call's write succeeds at once except `hung`'s, which answers only
 * by failing when its signal aborts (as the SDK rejects an aborted request). A write sent without a
 * signal fails the test instead of hanging it.
 */
function store(hung: string) {
  const written: string[] = [];
  const aborted: string[] = [];
  const toolCalls: Pick<ToolCallStore, "applyEvents" | "prefetch"> = {
    prefetch: async (callIds: readonly string[]): Promise<CallCache> =>
      new Map(callIds.map((id) => [id, null])),
    applyEvents: (
      events: readonly ToolCallLifecycleEvent[],
      _cache?: CallCache,
      options: RequestOptions = {},
    ) => {
      const callId = events[0]?.callId ?? "";
      if (callId !== hung) {
        written.push(callId);
        return Promise.resolve<Folded>({
          state: undefined,
          changes: events.map(() => "created"),
          changed: true,
        });
      }
      const { signal } = options;
      if (!signal)
        return Promise.reject(new Error("a write that could hang was sent without an abort signal"));
      return untilAborted(signal, () => aborted.push(callId));
    },
  };
  return { toolCalls, written, aborted };
}

describe("processor: a write that never answers is aborted at the invocation's deadline", () => {
  it("the call's record fails with InvocationDeadlineError and the response names it: the checkpoint", async () => {
    // Six records over six calls and two partition keys (session-0: 0, 2, 4; session-1: 1, 3, 5), one key
    // at a time so the order is the shard's; call-3's write hangs.
    const { records } = startedRecords(6, 2);
    const fake = store("call-3");
    const deps: ProcessorDeps = {
      toolCalls: fake.toolCalls,
      quarantine: async () => {
        throw new Error("nothing to quarantine in this batch");
      },
      concurrency: 1,
      // Real time, since the abort is a timer: nothing new starts after 2 s of the 4 s, and the requests
      // still open are aborted at 3 s. The other writes answer at once.
      deadlineMarginMs: 2_000,
    };

    const { response, outcome } = await processToolCallEvents(
      records,
      lambdaContext({ timeoutMs: 4_000 }),
      deps,
    );

    expect(fake.aborted).toEqual(["call-3"]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: records[3]?.kinesis.sequenceNumber }]);
    const failed = outcome.outcomes[3];
    expect(failed?.status).toBe(ItemStatus.Failed);
    expect(failed?.status === ItemStatus.Failed ? failed.error : undefined).toBeInstanceOf(
      InvocationDeadlineError,
    );
    // Nothing after the failure in the shard ran (§1.4): record 5 is session-1's next.
    expect(outcome.outcomes[5]).toEqual({
      status: ItemStatus.NotStarted,
      reason: NotStartedReason.AfterFailure,
    });
    expect(fake.written).not.toContain("call-5");
  });

  it("a quarantine write that never answers is aborted too: the bad record fails and is the checkpoint (§1.4)", async () => {
    // Record 1 of the shard's one key cannot be decoded; its quarantine (an S3 write) hangs until aborted.
    const { records: good } = startedRecords(3, 1);
    const bad = kinesisRecord({ partitionKey: "session-0", data: "not json", sequence: 1 });
    const records = [good[0], bad, good[2]].filter((r) => r !== undefined);
    const fake = store("none");
    const quarantined: string[] = [];
    const unbounded: string[] = [];
    const deps: ProcessorDeps = {
      toolCalls: fake.toolCalls,
      quarantine: (record, _reason, options = {}) => {
        const { signal } = options;
        if (!signal) {
          unbounded.push(record.kinesis.sequenceNumber);
          return Promise.reject(
            new Error("a quarantine write that could hang was sent without an abort signal"),
          );
        }
        return untilAborted(signal, () => quarantined.push(record.kinesis.sequenceNumber));
      },
      concurrency: 1,
      deadlineMarginMs: 2_000,
    };

    const { response, outcome, summary } = await processToolCallEvents(
      records,
      lambdaContext({ timeoutMs: 4_000 }),
      deps,
    );

    expect(unbounded).toEqual([]);
    expect(quarantined).toEqual([bad.kinesis.sequenceNumber]);
    // Neither quarantined nor acknowledged: the checkpoint stops at the bad record, the next one waits.
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: bad.kinesis.sequenceNumber }]);
    expect(outcome.outcomes[1]?.status).toBe(ItemStatus.Failed);
    expect(outcome.outcomes[2]).toEqual({
      status: ItemStatus.NotStarted,
      reason: NotStartedReason.AfterFailure,
    });
    expect(summary).toMatchObject({ applied: 1, quarantined: 0 });
  });
});
