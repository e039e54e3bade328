/**
 * The keys of a batch that wait to start their next record, as lanes: each key's records in batch order,
 * with how far the key has got.
 */
import { PriorityQueue } from "./priority-queue.js";
import { SchedulingRule } from "./schedule.js";

export interface KeyLane {
  readonly key: string;
  /** Batch indices of this key's records, ascending. */
  readonly indices: number[];
  next: number;
  /** Whether the lane waits in the ready set, and which of its heap entries is current. */
  queued: boolean;
  ticket: number;
}

export function remaining(lane: KeyLane): number {
  return lane.indices.length - lane.next;
}

const nextIndex = (lane: KeyLane): number => lane.indices[lane.next] ?? 0;

/**
 * Longest key first: the one with the most records left (its chain is the critical path; for equal
 * per-record latency this is Hu's list-scheduling rule, optimal for chains), ties broken by the
 * earliest record so that work near the front of the shard finishes first.
 */
function longestFirst(a: KeyLane, b: KeyLane): boolean {
  const ra = remaining(a);
  const rb = remaining(b);
  if (ra !== rb) return ra > rb;
  return nextIndex(a) < nextIndex(b);
}

interface Entry {
  readonly lane: KeyLane;
  readonly ticket: number;
}

/**
 * The keys ready to start, ordered both ways at once (one heap per rule, O(log K) per step), so the
 * rule can change between two picks. A lane's sort keys do not change while it waits; entries left in
 * the other heap when a lane is taken are skipped later by their ticket.
 */
export class ReadyLanes {
  readonly #byLength = new PriorityQueue<Entry>((a, b) => longestFirst(a.lane, b.lane));
  readonly #byIndex = new PriorityQueue<Entry>((a, b) => nextIndex(a.lane) < nextIndex(b.lane));
  size = 0;
  /** Records of the waiting lanes. */
  records = 0;

  push(lane: KeyLane): void {
    lane.ticket += 1;
    lane.queued = true;
    const entry = { lane, ticket: lane.ticket };
    this.#byLength.push(entry);
    this.#byIndex.push(entry);
    this.size += 1;
    this.records += remaining(lane);
  }

  pop(rule: SchedulingRule): KeyLane | undefined {
    const heap = rule === SchedulingRule.EarliestRecordFirst ? this.#byIndex : this.#byLength;
    for (let entry = heap.pop(); entry !== undefined; entry = heap.pop()) {
      if (!entry.lane.queued || entry.ticket !== entry.lane.ticket) continue;
      entry.lane.queued = false;
      this.size -= 1;
      this.records -= remaining(entry.lane);
      return entry.lane;
    }
    return undefined;
  }

  /** The most records left on one waiting key. */
  longest(): number {
    for (let top = this.#byLength.peek(); top !== undefined; top = this.#byLength.peek()) {
      if (top.lane.queued && top.ticket === top.lane.ticket) return remaining(top.lane);
      this.#byLength.pop();
    }
    return 0;
  }

  drain(): KeyLane[] {
    const lanes = this.#byLength
      .drain()
      .flatMap((e) => (e.lane.queued && e.ticket === e.lane.ticket ? [e.lane] : []));
    this.#byIndex.drain();
    for (const lane of lanes) lane.queued = false;
    this.size = 0;
    this.records = 0;
    return lanes;
  }
}

/** The batch's records grouped by key, each key's in batch order, the keys in order of first record. */
export function lanesOf<T>(items: readonly T[], keyOf: (item: T, index: number) => string): KeyLane[] {
  const lanes = new Map<string, KeyLane>();
  items.forEach((item, index) => {
    const key = keyOf(item, index);
    const lane = lanes.get(key);
    if (lane) lane.indices.push(index);
    else lanes.set(key, { key, indices: [index], next: 0, queued: false, ticket: 0 });
  });
  return [...lanes.values()];
}
