/**
 * The oracle: what each call's item must hold at the end, computed from what the producer put and what
 * the witness saw, by a model written here from the documented rule of the join (docs/idempotency.md, "the
 * processor"), not by the product's fold. A call's item is a function of the set of its events:
 *
 * - its status is decided by one event: a terminal one (completed, or failed for good) beats any other,
 *   and the first terminal to happen wins; without one, the higher phase (started, retrying) beats
 *   requested, and of one phase the later event wins;
 * - `requestedAt` and `startedAt` are the earliest request and start, `attempts` the highest attempt;
 *   `finishedAt` is the deciding terminal event's time;
 * - every event that changes the item is in its `recentEventIds`, and each raises its version by one.
 *
 * The scenario's calls are built so that every event of a call changes its item whatever the order of
 * arrival (a request, one or two starts of growing attempts, at most one terminal event), so the model
 * can also say which events the item lists and what its version is. A job's call gets the producer's
 * request and the worker's own events, which the producer does not see: for it the model says what the
 * job as sent makes it (completed, or failed when the job asks the downstream to refuse it for good), not
 * what the witness saw, and that the producer's request is in it.
 */

/** One lifecycle event as the producer put it (read back from the bytes it put, not from the product). */
export interface PutEvent {
  readonly eventId: string;
  readonly callId: string;
  readonly type: "tool_call.requested" | "tool_call.started" | "tool_call.completed" | "tool_call.failed";
  readonly occurredAt: string;
  readonly attempt?: number;
  /** failed events: whether the worker could still retry. */
  readonly retryable?: boolean;
}

/** The item fields the oracle judges, as read from the table (a Scan, unmarshalled). */
export interface TableItem {
  readonly callId: string;
  readonly status?: string | undefined;
  readonly statusEvent?: { readonly eventId?: string } | undefined;
  readonly requestedAt?: string | undefined;
  readonly startedAt?: string | undefined;
  readonly finishedAt?: string | undefined;
  readonly attempts?: number | undefined;
  readonly version?: number | undefined;
  readonly recentEventIds?: readonly string[] | undefined;
  readonly output?: string | undefined;
  readonly result?: {
    readonly location?:
      | { readonly kind?: string | undefined; readonly bucket?: string | undefined; readonly key?: string }
      | undefined;
  };
}

export interface ExpectedCall {
  readonly status: string;
  readonly statusEventId: string;
  readonly requestedAt: string | undefined;
  readonly startedAt: string | undefined;
  readonly finishedAt: string | undefined;
  readonly attempts: number;
  readonly eventIds: ReadonlySet<string>;
}

const PHASE: Record<string, number> = { requested: 1, started: 2, retrying: 2, completed: 3, failed: 3 };

function statusOf(event: PutEvent): string {
  switch (event.type) {
    case "tool_call.requested":
      return "requested";
    case "tool_call.started":
      return "started";
    case "tool_call.completed":
      return "completed";
    case "tool_call.failed":
      return event.retryable ? "retrying" : "failed";
  }
}

const earliest = (values: readonly string[]) => (values.length ? [...values].sort()[0] : undefined);

/** The item a call's events make, by the rule of the join (the events: every distinct one the producer put). */
export function expectedCall(events: readonly PutEvent[]): ExpectedCall {
  const distinct = [...new Map(events.map((e) => [e.eventId, e])).values()];
  const terminal = distinct.filter((e) => PHASE[statusOf(e)] === 3);
  const decider =
    terminal.length > 0
      ? [...terminal].sort(
          (a, b) =>
            a.occurredAt.localeCompare(b.occurredAt) ||
            // Of one instant, completed before failed.
            (statusOf(a) === "completed" ? -1 : 0) - (statusOf(b) === "completed" ? -1 : 0),
        )[0]
      : [...distinct].sort(
          (a, b) =>
            (PHASE[statusOf(b)] ?? 0) - (PHASE[statusOf(a)] ?? 0) || b.occurredAt.localeCompare(a.occurredAt),
        )[0];
  if (decider === undefined) throw new RangeError("a call needs at least one event");
  const starts = distinct.filter((e) => e.type === "tool_call.started");
  return {
    status: statusOf(decider),
    statusEventId: decider.eventId,
    requestedAt: earliest(distinct.filter((e) => e.type === "tool_call.requested").map((e) => e.occurredAt)),
    startedAt: earliest(starts.map((e) => e.occurredAt)),
    finishedAt: PHASE[statusOf(decider)] === 3 ? decider.occurredAt : undefined,
    attempts: Math.max(0, ...starts.map((e) => e.attempt ?? 0)),
    eventIds: new Set(distinct.map((e) => e.eventId)),
  };
}

/** What differs between a stream call's item and the model's, one phrase a field (empty: they agree). */
export function compareStreamCall(expected: ExpectedCall, item: TableItem | undefined): string[] {
  if (item === undefined) return ["no item"];
  const out: string[] = [];
  const field = (name: string, want: unknown, got: unknown) => {
    if (want !== got) out.push(`${name} ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
  };
  field("status", expected.status, item.status);
  field("deciding event", expected.statusEventId, item.statusEvent?.eventId);
  field("requestedAt", expected.requestedAt, item.requestedAt);
  field("startedAt", expected.startedAt, item.startedAt);
  field("finishedAt", expected.finishedAt, item.finishedAt);
  field("attempts", expected.attempts, item.attempts ?? 0);
  const listed = new Set(item.recentEventIds ?? []);
  const missing = [...expected.eventIds].filter((id) => !listed.has(id));
  const foreign = [...listed].filter((id) => !expected.eventIds.has(id));
  if (missing.length) out.push(`events not applied: ${missing.join(", ")}`);
  if (foreign.length) out.push(`events nobody put: ${foreign.join(", ")}`);
  field("version (events that changed it)", expected.eventIds.size, item.version);
  return out;
}

/** What a job's call must show: the outcome the job as sent asks for, and the producer's request folded in. */
export interface ExpectedJobCall {
  /** failed when the job asks the downstream to refuse it, completed otherwise. */
  readonly status: "completed" | "failed";
  readonly requestedEventId: string;
  readonly requestedAt: string;
}

export function compareJobCall(expected: ExpectedJobCall, item: TableItem | undefined): string[] {
  if (item === undefined) return ["no item"];
  const out: string[] = [];
  if (item.status !== expected.status)
    out.push(`status ${JSON.stringify(item.status)}, expected "${expected.status}"`);
  if (item.requestedAt !== expected.requestedAt)
    out.push(`requestedAt ${JSON.stringify(item.requestedAt)}, expected "${expected.requestedAt}"`);
  if (!(item.recentEventIds ?? []).includes(expected.requestedEventId))
    out.push(`the producer's request ${expected.requestedEventId} not applied`);
  return out;
}
