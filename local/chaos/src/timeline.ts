/**
 * The production phase's critical path, measured (`--timeline FILE`): for each chunk, how long the producer
 * waited for the backlog, put the records and sent the jobs, and when the processor received the chunk's
 * last record and the workers finished its jobs; how busy each function's sandboxes were; how each shard's
 * poller spent its time (reading, invoking, waiting); what each SQS mapping's receives waited for. Off by
 * default: a run without the flag records none of it (docs/benchmarks/ceiling.md, "What production waits
 * for").
 */
import type { FunctionName, InvokeFunction, KinesisEsmEvent, SqsEsmEvent } from "@mcp-pipeline/local-runtime";
import type { Ledger } from "./ledger.js";

/** What the producer did for one chunk, in ms of the run's clock (Date.now()). */
interface ChunkMarks {
  readonly chunk: number;
  /** The producer began waiting for the backlog to fall to a chunk. */
  readonly waitFrom: number;
  /** The records were put from here to `putAt`, the jobs sent from there to `sentAt`. */
  readonly putFrom: number;
  readonly putAt: number;
  readonly sentAt: number;
  /** The schedule's changes after the chunk (split, merge, SQS restart) were done. */
  readonly changedAt: number;
  /** Indexes into the ledger's stream and jobs of what the chunk put and sent. */
  readonly stream: readonly [number, number];
  readonly jobs: readonly [number, number];
}

interface Span {
  readonly from: number;
  readonly at: number;
}

/** How a quantity of spans overlapped in time: mean number at once, and the share of time at or above `cap`. */
function occupancy(spans: readonly Span[], from: number, to: number, cap: number) {
  const edges: [number, number][] = [];
  for (const s of spans) {
    const a = Math.max(from, s.from);
    const b = Math.min(to, s.at);
    if (b > a) edges.push([a, 1], [b, -1]);
  }
  edges.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let level = 0;
  let last = from;
  let area = 0;
  let atCap = 0;
  let max = 0;
  for (const [t, d] of edges) {
    area += level * (t - last);
    if (level >= cap) atCap += t - last;
    last = t;
    level += d;
    max = Math.max(max, level);
  }
  const span = Math.max(1, to - from);
  return { meanInFlight: round2(area / span), maxInFlight: max, shareAtCap: round2(atCap / span) };
}

/** How long at least one of the spans ran: reads and rounds overlap now that a shard is read while it invokes. */
function covered(spans: readonly Span[]): number {
  const sorted = [...spans].sort((a, b) => a.from - b.from);
  let total = 0;
  let end = Number.NEGATIVE_INFINITY;
  for (const s of sorted) {
    if (s.at <= end) continue;
    total += s.at - Math.max(s.from, end);
    end = s.at;
  }
  return total;
}

const round2 = (n: number) => Math.round(n * 100) / 100;
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const quantile = (xs: readonly number[], q: number) => {
  if (xs.length === 0) return 0;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
};

export class ProductionTimeline {
  readonly #chunks: ChunkMarks[] = [];
  readonly #invocations: (Span & { readonly fn: FunctionName; readonly items: number })[] = [];
  readonly #reads: Extract<KinesisEsmEvent, { type: "read" }>[] = [];
  readonly #rounds: Extract<KinesisEsmEvent, { type: "round" }>[] = [];
  readonly #receives: (Extract<SqsEsmEvent, { type: "received" }> & { readonly fn: FunctionName })[] = [];

  onKinesisEvent = (event: KinesisEsmEvent): void => {
    if (event.type === "read") this.#reads.push(event);
    if (event.type === "round") this.#rounds.push(event);
  };

  onSqsEvent = (fn: FunctionName, event: SqsEsmEvent): void => {
    if (event.type === "received") this.#receives.push({ ...event, fn });
  };

  /** Outermost around each function's invoke: when the mapping called it and when the answer came back. */
  wrapInvoke =
    (fn: FunctionName, invoke: InvokeFunction): InvokeFunction =>
    async (event) => {
      const from = Date.now();
      try {
        return await invoke(event);
      } finally {
        const items = (event as { Records?: unknown[] }).Records?.length ?? 0;
        this.#invocations.push({ fn, from, at: Date.now(), items });
      }
    };

  chunk(marks: ChunkMarks): void {
    this.#chunks.push(marks);
  }

  /**
   * The production phase from `from` (the harness up) to `to` (the last chunk put), with each chunk's
   * deliveries and job outcomes read from the ledger; times in ms since `from`.
   */
  summary(ledger: Ledger, from: number, to: number, caps: Readonly<Partial<Record<FunctionName, number>>>) {
    const rel = (t: number | undefined) => (t === undefined ? null : t - from);
    const chunks = this.#chunks.map((c) => {
      const records = ledger.stream.slice(c.stream[0], c.stream[1]);
      const delivered = records.flatMap((r) => ledger.deliveredAt(r.sequenceNumber) ?? []);
      const jobs = ledger.jobs.slice(c.jobs[0], c.jobs[1]);
      const finished = jobs.flatMap((j) => (j.callId ? (ledger.effects.finishedAt(j.callId) ?? []) : []));
      const invoked = jobs.flatMap((j) => (j.callId ? ledger.invocations(j.callId) : []));
      return {
        chunk: c.chunk,
        waitedMs: c.putFrom - c.waitFrom,
        putAt: rel(c.putFrom),
        putMs: c.putAt - c.putFrom,
        sendMs: c.sentAt - c.putAt,
        changesMs: c.changedAt - c.sentAt,
        records: records.length,
        delivered: delivered.length,
        /** From the chunk's put to its records' first deliveries: the median, the 90th percentile, the last. */
        deliveredMs: {
          p50: quantile(delivered, 0.5) - c.putAt,
          p90: quantile(delivered, 0.9) - c.putAt,
          last: (delivered.length ? Math.max(...delivered) : c.putAt) - c.putAt,
        },
        jobs: jobs.length,
        /** From the jobs sent to their first invocation and to their calls finished (result stored). */
        firstInvokedMs: invoked.length ? Math.min(...invoked.map((i) => i.from)) - c.sentAt : null,
        finishedMs: {
          count: finished.length,
          p50: finished.length ? quantile(finished, 0.5) - c.sentAt : null,
          last: finished.length ? Math.max(...finished) - c.sentAt : null,
        },
      };
    });
    const functions = Object.fromEntries(
      [...new Set(this.#invocations.map((i) => i.fn))].map((fn) => {
        const mine = this.#invocations.filter((i) => i.fn === fn && i.at > from && i.from < to);
        const durations = mine.map((i) => i.at - i.from);
        return [
          fn,
          {
            invocations: mine.length,
            items: sum(mine.map((i) => i.items)),
            durationMs: {
              p50: quantile(durations, 0.5),
              p90: quantile(durations, 0.9),
              max: Math.max(0, ...durations),
            },
            cap: caps[fn] ?? null,
            ...occupancy(mine, from, to, caps[fn] ?? Number.POSITIVE_INFINITY),
          },
        ];
      }),
    );
    const shards = Object.fromEntries(
      [...new Set(this.#reads.map((r) => r.shardId))].map((shardId) => {
        const reads = this.#reads.filter(
          (r) => r.shardId === shardId && r.answeredAt > from && r.askedAt < to,
        );
        const rounds = this.#rounds.filter((r) => r.shardId === shardId && r.at > from && r.from < to);
        const first = Math.min(...reads.map((r) => r.askedAt), ...rounds.map((r) => r.from));
        const last = Math.max(...reads.map((r) => r.answeredAt), ...rounds.map((r) => r.at));
        const readMs = sum(reads.map((r) => r.answeredAt - r.askedAt));
        // From one read's answer to the next read's ask: how long the shard went unread. After a read that
        // brought records that is time the poller could have read on (§1.1); after an empty one, the poll
        // interval.
        const inOrder = [...reads].sort((a, b) => a.askedAt - b.askedAt);
        const gaps = inOrder.slice(1).map((r, i) => ({
          ms: r.askedAt - (inOrder[i] as (typeof inOrder)[number]).answeredAt,
          afterRecords: (inOrder[i] as (typeof inOrder)[number]).records > 0,
        }));
        const gapsAfterRecords = gaps.filter((g) => g.afterRecords).map((g) => g.ms);
        const roundMs = sum(rounds.map((r) => r.at - r.from));
        const roundDurations = rounds.map((r) => r.at - r.from);
        return [
          shardId,
          {
            activeFromMs: first - from,
            activeMs: last - first,
            reads: reads.length,
            emptyReads: reads.filter((r) => r.records === 0).length,
            records: sum(reads.map((r) => r.records)),
            readMs,
            rounds: rounds.length,
            roundRecords: sum(rounds.map((r) => r.records)),
            roundMs,
            roundDurationMs: {
              p50: quantile(roundDurations, 0.5),
              p90: quantile(roundDurations, 0.9),
              max: Math.max(0, ...roundDurations),
            },
            /** Unread between reads that brought records: the median, the longest, all of it. */
            unreadAfterRecordsMs: {
              p50: quantile(gapsAfterRecords, 0.5),
              max: Math.max(0, ...gapsAfterRecords),
              total: sum(gapsAfterRecords),
            },
            /** Unread between any two reads (after an empty one: the poll interval), the longest. */
            unreadMaxMs: Math.max(0, ...gaps.map((g) => g.ms)),
            /**
             * Neither reading nor invoking: the poll interval after an empty read, the batching window, a
             * reader waiting for room while no lane invokes.
             */
            waitingMs:
              last -
              first -
              covered([
                ...reads.map((r) => ({ from: r.askedAt, at: r.answeredAt })),
                ...rounds.map((r) => ({ from: r.from, at: r.at })),
              ]),
          },
        ];
      }),
    );
    const receives = Object.fromEntries(
      [...new Set(this.#receives.map((r) => r.fn))].map((fn) => {
        const mine = this.#receives.filter((r) => r.fn === fn && r.at > from && r.from < to);
        const empty = mine.filter((r) => r.messages === 0);
        return [
          fn,
          {
            receives: mine.length,
            messages: sum(mine.map((r) => r.messages)),
            empty: empty.length,
            emptyWaitMs: sum(empty.map((r) => r.at - r.from)),
            withMessagesMs: sum(mine.filter((r) => r.messages > 0).map((r) => r.at - r.from)),
          },
        ];
      }),
    );
    return { productionMs: to - from, chunks, functions, shards, receives };
  }
}

export type ProductionSummary = ReturnType<ProductionTimeline["summary"]>;
