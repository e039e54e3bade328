import type { DecodeResult, ToolCallLifecycleEvent } from "@mcp-pipeline/contracts";

/** The decoded events of one call in a batch, in shard order. */
export interface CallEvents {
  readonly events: ToolCallLifecycleEvent[];
  /** `indices[i]` is the batch index of `events[i]`, ascending. */
  readonly indices: number[];
}

export interface Grouped {
  readonly calls: ReadonlyMap<string, CallEvents>;
  /** `positionOf[index]`: where a record's event sits among its call's events (-1: undecodable). */
  readonly positionOf: readonly number[];
}

/** Groups a batch's decodable events by `callId`, keeping shard order within each call. */
export function groupByCall(decoded: readonly DecodeResult<ToolCallLifecycleEvent>[]): Grouped {
  const calls = new Map<string, CallEvents>();
  const positionOf = decoded.map((result, index) => {
    if (!result.ok) return -1;
    const event = result.value;
    let call = calls.get(event.callId);
    if (!call) {
      call = { events: [], indices: [] };
      calls.set(event.callId, call);
    }
    call.events.push(event);
    call.indices.push(index);
    return call.events.length - 1;
  });
  return { calls, positionOf };
}
