import type { ToolCallLifecycleEvent } from "@mcp-pipeline/contracts";
import { type ApplyChange, applyEvent, type ToolCallState } from "./state.js";

/** A call's state after folding a run of its events, and what each event did to it. */
export interface Folded {
  /** The new state; the very `current` object when no event changed anything. */
  readonly state: ToolCallState | undefined;
  /** `changes[i]` belongs to `events[i]`. */
  readonly changes: readonly ApplyChange[];
  /** Whether the state differs from `current`, i.e. whether it needs a write. */
  readonly changed: boolean;
}

/**
 * Folds events of one call, in the given order, onto `current`. Since `applyEvent` is a join, the
 * content is the same as folding them one write at a time, and in the same order the item is the same
 * to the byte (version and recent event ids included): only the number of writes differs.
 */
export function foldEvents(
  current: ToolCallState | undefined,
  events: readonly ToolCallLifecycleEvent[],
): Folded {
  let state = current;
  const changes: ApplyChange[] = [];
  for (const event of events) {
    if (state !== undefined && event.callId !== state.callId) {
      throw new RangeError(`event ${event.eventId} belongs to call ${event.callId}, not ${state.callId}`);
    }
    const applied = applyEvent(state, event);
    changes.push(applied.change);
    state = applied.state;
  }
  return { state, changes, changed: state !== current };
}
