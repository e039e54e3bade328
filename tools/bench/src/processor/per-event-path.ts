import type { RemainingTime } from "@mcp-pipeline/batch";
import type { ToolCallLifecycleEvent } from "@mcp-pipeline/contracts";
import type { QuarantineReason } from "@mcp-pipeline/recovery/quarantine";
import type { ApplyChange, CallCache, ToolCallStore } from "@mcp-pipeline/tool-calls";
import { type IdempotencyStore, runOnce } from "@mcp-pipeline/tool-calls/idempotency";
import type { KinesisStreamRecord } from "aws-lambda";
import { type ProcessResult, processDecodedBatch } from "../../../../functions/processor/src/core.js";

/**
 * The processor's previous algorithm, kept out of the function bundle (it lives with the benchmarks, and
 * nothing under functions/processor/src imports it): one claim and one completion on the dedupe table and
 * one write on tool-calls per event. The benchmark (tools/bench/src/processor-requests.ts) measures it against
 * the coalescing path, and the property test (functions/processor/test/integration/coalescing.property.test.ts) checks
 * that both leave the same tool-calls table.
 */
export interface PerEventDeps {
  readonly toolCalls: Pick<ToolCallStore, "apply" | "prefetch">;
  readonly idempotency: Pick<IdempotencyStore, "claim" | "complete" | "release" | "completedAmong">;
  /** Durably stores a record that can never succeed; resolves once stored. */
  readonly quarantine: (record: KinesisStreamRecord, reason: QuarantineReason) => Promise<void>;
  readonly concurrency: number;
  readonly deadlineMarginMs: number;
  /** Called when a batch pre-read fails; processing continues with per-record reads. */
  readonly onPrefetchError?: (error: unknown) => void;
  readonly now?: () => number;
}

async function prefetch(
  deps: PerEventDeps,
  events: readonly ToolCallLifecycleEvent[],
): Promise<{ completed: ReadonlySet<string>; cache: CallCache }> {
  try {
    const [completed, cache] = await Promise.all([
      deps.idempotency.completedAmong(events.map((e) => e.eventId)),
      deps.toolCalls.prefetch(events.map((e) => e.callId)),
    ]);
    return { completed, cache };
  } catch (error) {
    // The pre-read only saves requests; without it every record reads for itself.
    deps.onPrefetchError?.(error);
    return { completed: new Set(), cache: new Map() };
  }
}

/**
 * Decode every record, skip the ones the dedupe table says are done, run each of the rest once per
 * eventId (claim, write, complete), quarantine what can never succeed, answer with the partial batch
 * response (docs/aws-semantics.md §1.4).
 */
export function processPerEvent(
  records: readonly KinesisStreamRecord[],
  context: RemainingTime,
  deps: PerEventDeps,
): Promise<ProcessResult> {
  return processDecodedBatch(records, context, deps, async (decoded) => {
    const events = decoded.flatMap((d) => (d.ok ? [d.value] : []));
    const { completed, cache } = await prefetch(deps, events);
    return async (event) => {
      let change: ApplyChange | undefined;
      const ran = await runOnce(
        deps.idempotency,
        event.eventId,
        context.getRemainingTimeInMillis(),
        async () => {
          change = (await deps.toolCalls.apply(event, cache)).change;
        },
        completed,
      );
      return !(ran === "duplicate" || change === "duplicate");
    };
  });
}
