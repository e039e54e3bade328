/**
 * The processor's and the workers' effects on the tool-calls table, as the DynamoDB door saw them: every
 * accepted write of a call's item. A call's writes are put in version order (each accepted write was
 * conditional on the version it read, so versions are distinct and grow; the door may see two answers out
 * of order). From them: which events were applied and in which order, and whether any write went back on
 * an earlier one. The item's `recentEventIds` is the fold's own list of the events it applied, in the
 * order it applied them, so the order of a call's effects is readable from its writes; what lies behind a
 * write (the fold, the cache, the condition) is not trusted, only what was written.
 */
import type { CallWrite } from "./doors.js";

/** The fold keeps a call's last 32 event ids (packages/tool-calls RECENT_EVENT_IDS): a longer list is cut at the front. */
const KEPT = 32;

/** A write that does not follow from the one before it: an event lost or applied twice, a version skipped. */
export interface WriteRegression {
  readonly callId: string;
  readonly version: number;
  readonly problem: string;
}

export class CallEffects {
  readonly #writes = new Map<string, CallWrite[]>();
  /** When each event id was first seen written (ms), for the stall measure. */
  readonly #appliedAt = new Map<string, number>();
  /** When each call's item was first written in a terminal status (its outcome stored). */
  readonly #finishedAt = new Map<string, number>();

  record(write: CallWrite, at: number): void {
    if ((write.status === "completed" || write.status === "failed") && !this.#finishedAt.has(write.callId))
      this.#finishedAt.set(write.callId, at);
    const list = this.#writes.get(write.callId);
    if (list) list.push(write);
    else this.#writes.set(write.callId, [write]);
    for (const id of write.eventIds) if (!this.#appliedAt.has(id)) this.#appliedAt.set(id, at);
  }

  /** Whether the event was folded into its call's item by some accepted write. */
  applied(eventId: string): boolean {
    return this.#appliedAt.has(eventId);
  }

  appliedAt(eventId: string): number | undefined {
    return this.#appliedAt.get(eventId);
  }

  /** Whether any accepted write left the call in a terminal status (completed or failed). */
  finished(callId: string): boolean {
    return (this.#writes.get(callId) ?? []).some((w) => w.status === "completed" || w.status === "failed");
  }

  /** When an accepted write first left the call in a terminal status, if one did. */
  finishedAt(callId: string): number | undefined {
    return this.#finishedAt.get(callId);
  }

  get calls(): number {
    return this.#writes.size;
  }

  #ordered(callId: string): CallWrite[] {
    return [...(this.#writes.get(callId) ?? [])].sort((a, b) => a.version - b.version);
  }

  /** The call's event ids in the order they were first applied, across its writes in version order. */
  applicationOrder(callId: string): string[] {
    const seen = new Set<string>();
    const order: string[] = [];
    for (const write of this.#ordered(callId))
      for (const id of write.eventIds)
        if (!seen.has(id)) {
          seen.add(id);
          order.push(id);
        }
    return order;
  }

  /**
   * Writes that do not extend the write before them: each accepted write must keep every event id the
   * previous one had (but those cut at the front beyond 32), add each new one once, and raise the version
   * by the number it added (one per event that changed the item), or by one for a new claim registered
   * over a `started` the item already had. A write over state it did not read (a
   * lost update) drops ids; an event applied twice repeats one.
   */
  regressions(limit = Number.POSITIVE_INFINITY): { count: number; examples: WriteRegression[] } {
    let count = 0;
    const examples: WriteRegression[] = [];
    const add = (callId: string, version: number, problem: string) => {
      count += 1;
      if (examples.length < limit) examples.push({ callId, version, problem });
    };
    for (const callId of this.#writes.keys()) {
      let previous: CallWrite | undefined;
      for (const write of this.#ordered(callId)) {
        const problem = regression(previous, write);
        if (problem) add(callId, write.version, problem);
        previous = write;
      }
    }
    return { count, examples };
  }
}

function regression(previous: CallWrite | undefined, write: CallWrite): string | undefined {
  if (new Set(write.eventIds).size !== write.eventIds.length) return "an event id twice in one item";
  const before = previous?.eventIds ?? [];
  const added = write.eventIds.filter((id) => !before.includes(id));
  const expected = [...before, ...added].slice(-KEPT);
  if (expected.join("\n") !== write.eventIds.join("\n"))
    return `dropped ${before.filter((id) => !write.eventIds.includes(id) && expected.includes(id)).join(", ") || "events"} that version ${previous?.version ?? 0} had`;
  const raise = write.version - (previous?.version ?? 0);
  // A worker's claim registered on the item bumps the version even when its `started` is folded already
  // (the same attempt delivered twice): the bump is what fences a late outcome write of the claim before
  // it (docs/idempotency.md "Fencing outcomes by the claim"). One version for a new claim, no more.
  const registered = write.claimToken !== undefined && write.claimToken !== previous?.claimToken ? 1 : 0;
  if (raise !== added.length && !(added.length === 0 && raise === registered))
    return `version ${previous?.version ?? 0} -> ${write.version} for ${added.length} new events`;
  return undefined;
}
