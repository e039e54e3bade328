/**
 * The run over time, for the HTML report: sampled every `intervalMs` while the scenario runs. Per shard,
 * the records the Kinesis ESM delivered to the processor in each interval (throughput) and the largest
 * iterator age of the batches it invoked in that interval; over the whole pipeline, running totals of what
 * the summary counts at the end.
 */
import type { KinesisEsmEvent } from "../esm/kinesis/poller.js";

/** Running totals read from the pipeline at each sample. */
export interface Counters {
  readonly applied: number;
  /** Unreadable records the processor quarantined (at least once: a redelivered one counts again). */
  readonly unreadable: number;
  /** Objects in the quarantine bucket (distinct records: unreadable ones and what dlq-redrive stored). */
  readonly quarantineObjects: number;
  readonly dlq: number;
  readonly retried: number;
  readonly bisected: number;
  /** Invocations per function, and timeouts per function. */
  readonly invocations: Readonly<Record<string, number>>;
  readonly timeouts: Readonly<Record<string, number>>;
}

export interface ShardSeries {
  readonly shardId: string;
  /** Records per second delivered in each interval. */
  readonly recordsPerSecond: number[];
  /** The largest iterator age of the interval's invocations, null when the shard had none. */
  readonly iteratorAgeMs: (number | null)[];
}

export interface TimelineData {
  readonly intervalMs: number;
  /** Seconds since the run started, one per sample. */
  readonly t: number[];
  readonly shards: ShardSeries[];
  readonly counters: { readonly [K in keyof Counters]: Counters[K][] };
}

interface ShardInterval {
  records: number;
  iteratorAgeMs: number | null;
}

export class Timeline {
  readonly intervalMs: number;
  #started: number;
  readonly #t: number[] = [];
  readonly #shards = new Map<string, { series: ShardSeries; current: ShardInterval }>();
  readonly #counters: Counters[] = [];
  #last = 0;

  constructor(intervalMs = 1_000, started = Date.now()) {
    this.intervalMs = intervalMs;
    this.#started = started;
    this.#last = started;
  }

  /** Time 0 of the charts: when the scenario starts (the emulators' start-up is not part of the run). */
  begin(now = Date.now()): void {
    this.#started = now;
    this.#last = now;
  }

  /** Give it every Kinesis ESM event (LocalPipeline's onKinesisEvent). */
  onKinesisEvent = (event: KinesisEsmEvent): void => {
    if (event.type !== "invoked") return;
    const shard = this.#shard(event.shardId);
    shard.current.records += event.records;
    shard.current.iteratorAgeMs = Math.max(shard.current.iteratorAgeMs ?? 0, event.iteratorAgeMs);
  };

  /** Closes the current interval with the pipeline's totals at this moment. */
  sample(counters: Counters, now = Date.now()): void {
    const seconds = Math.max((now - this.#last) / 1000, 0.001);
    this.#last = now;
    this.#t.push(Math.round((now - this.#started) / 100) / 10);
    this.#counters.push(counters);
    for (const { series, current } of this.#shards.values()) {
      // A shard first seen late has no values before: pad so every series is as long as t.
      while (series.recordsPerSecond.length < this.#t.length - 1) {
        series.recordsPerSecond.push(0);
        series.iteratorAgeMs.push(null);
      }
      series.recordsPerSecond.push(Math.round((current.records / seconds) * 10) / 10);
      series.iteratorAgeMs.push(current.iteratorAgeMs);
      current.records = 0;
      current.iteratorAgeMs = null;
    }
  }

  data(): TimelineData {
    const keys = (this.#counters[0] ? Object.keys(this.#counters[0]) : []) as (keyof Counters)[];
    const counters = Object.fromEntries(keys.map((k) => [k, this.#counters.map((c) => c[k])]));
    return {
      intervalMs: this.intervalMs,
      t: [...this.#t],
      shards: [...this.#shards.values()]
        .map((s) => s.series)
        .sort((a, b) => a.shardId.localeCompare(b.shardId)),
      counters: counters as TimelineData["counters"],
    };
  }

  #shard(shardId: string) {
    let shard = this.#shards.get(shardId);
    if (!shard) {
      shard = {
        series: { shardId, recordsPerSecond: [], iteratorAgeMs: [] },
        current: { records: 0, iteratorAgeMs: null },
      };
      this.#shards.set(shardId, shard);
    }
    return shard;
  }
}
