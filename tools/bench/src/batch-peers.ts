/**
 * `npm run bench:peers`: the key-ordered engine (packages/batch) against the seed pattern (a sequential
 * loop over the records) and Powertools' BatchProcessor (parallel and sequential), on the same Kinesis
 * batches and the same simulated downstream, in the same run:
 *
 * 1. N records over K keys (and a Zipf-skewed key set), each record a downstream call of L ms: wall
 *    time, its ratio to the order-preserving bound max(ceil(N/C), max_k n_k) x L, and per-key order
 *    violations.
 * 2. The slow-downstream incident (100 records x 600 ms against a 60 s timeout, run 10x faster): what
 *    each applies and acknowledges before the timeout, and what is redelivered.
 *
 * Writes docs/benchmarks/batch-peers.md. Options: --quick (N = 200, one repeat), --repeats <n>.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  BatchProcessor,
  BatchProcessorSync,
  EventType,
  processPartialResponse,
  processPartialResponseSync,
} from "@aws-lambda-powertools/batch";
import { deadlineFromContext, kinesisBatchResponse, processKinesisBatch } from "@mcp-pipeline/batch";
import { kinesisRecord, lambdaContext } from "@mcp-pipeline/emulators/testing";
import { seededRandom, sleep } from "@mcp-pipeline/retry";
import { TUNING } from "@mcp-pipeline/settings";
import type { Context, KinesisStreamRecord } from "aws-lambda";
import { spreadKeys, zipfKeys } from "./lib/keys.ts";
import { describeMachine, machineNow } from "./lib/machine.ts";
import { hottestKey, orderPreservingBoundMs, orderViolations } from "./lib/order.ts";
import { formatSpread, type Spread, spreadOf } from "./lib/stats.ts";
import { writePage } from "./lib/write-page.ts";

const root = join(import.meta.dirname, "../../..");
/** The version installed, as the page names it. */
const POWERTOOLS_VERSION = (
  JSON.parse(
    await readFile(join(root, "node_modules/@aws-lambda-powertools/batch/package.json"), "utf8"),
  ) as { version: string }
).version;
/** The processor's defaults: partition keys at once, and the deadline margin. */
const CONCURRENCY = TUNING.processor.concurrency.default;
const MARGIN_MS = TUNING.processor.deadline_margin_ms.default;

const { values: cli } = parseArgs({
  options: { quick: { type: "boolean" }, repeats: { type: "string" } },
  strict: true,
});
const quick = cli.quick ?? false;
const REPEATS = cli.repeats === undefined ? (quick ? 1 : 3) : Number(cli.repeats);
if (!Number.isInteger(REPEATS) || REPEATS < 1) {
  throw new RangeError(`--repeats must be a whole number >= 1, got "${cli.repeats}"`);
}
const N = quick ? 200 : 1_000;
const L = 20;

// ---------------------------------------------------------------------------------------------------
// The downstream and the contenders

/** The downstream stopped taking effects: the invocation was killed at its timeout. */
class InvocationKilledError extends Error {
  override readonly name = "InvocationKilledError";
  constructor(readonly index: number) {
    super(`record ${index}: the invocation was killed at its timeout`);
  }
}

/**
 * A downstream call of `latencyMs` per record. Its effect takes place `arrivals[i]` ms into the call (the
 * request leg of a round trip varies), so calls in flight together for one key can land out of order, as
 * they do against a real service; `applied` lists the records in the order their effects took place.
 */
class Downstream {
  readonly applied: number[] = [];
  readonly #indexes: ReadonlyMap<string, number>;
  #killed = false;

  constructor(
    records: readonly KinesisStreamRecord[],
    readonly latencyMs: number,
    readonly arrivals: readonly number[],
  ) {
    this.#indexes = new Map(records.map((r, i) => [r.kinesis.sequenceNumber, i]));
  }

  /** The record's position in the batch, from its sequence number. */
  indexOf(sequenceNumber: string): number {
    const index = this.#indexes.get(sequenceNumber);
    if (index === undefined) throw new RangeError(`sequence number ${sequenceNumber} is not in the batch`);
    return index;
  }

  readonly callRecord = (record: KinesisStreamRecord): Promise<void> =>
    this.call(this.indexOf(record.kinesis.sequenceNumber));

  readonly call = async (index: number): Promise<void> => {
    const arrival = this.arrivals[index] ?? 0;
    await sleep(arrival);
    if (this.#killed) throw new InvocationKilledError(index);
    this.applied.push(index);
    await sleep(this.latencyMs - arrival);
  };

  /** From now on nothing takes effect: the sandbox is gone. */
  kill(): void {
    this.#killed = true;
  }
}

/** What a Kinesis handler answers (§1.4): the failed sequence numbers, the lowest being the checkpoint. */
interface BatchResponse {
  readonly batchItemFailures: readonly { readonly itemIdentifier: string }[];
}

/**
 * The Lambda context, and the engine's deadline margin: the processor's 5 s, scaled down with a timeout
 * shorter than 60 s (the incident's). The margin is also the engine's latency estimate until a record ends.
 */
interface Invocation {
  readonly context: Context;
  readonly marginMs: number;
}

interface Contender {
  readonly name: string;
  readonly run: (
    records: KinesisStreamRecord[],
    downstream: Downstream,
    invocation: Invocation,
  ) => Promise<BatchResponse>;
}

const ENGINE: Contender = {
  name: `engine (C = ${CONCURRENCY})`,
  run: async (records, downstream, { context, marginMs }) =>
    kinesisBatchResponse(
      await processKinesisBatch(records, {
        handle: (_record, { index }) => downstream.call(index),
        setAside: async () => undefined,
        concurrency: CONCURRENCY,
        deadline: deadlineFromContext(context, marginMs),
      }),
    ),
};

/** The seed pattern: one record after another, returning at the first failure (the checkpoint, §1.4). */
const SEED_LOOP: Contender = {
  name: "seed loop (sequential)",
  run: async (records, downstream) => {
    for (const record of records) {
      try {
        await downstream.callRecord(record);
      } catch {
        return { batchItemFailures: [{ itemIdentifier: record.kinesis.sequenceNumber }] };
      }
    }
    return { batchItemFailures: [] };
  },
};

const powertools = (processInParallel: boolean): Contender => ({
  name: `Powertools BatchProcessor, ${processInParallel ? "parallel (default)" : "processInParallel: false"}`,
  run: (records, downstream, { context }) =>
    processPartialResponse(
      { Records: records },
      (record: KinesisStreamRecord) => downstream.callRecord(record),
      new BatchProcessor(EventType.KinesisDataStreams),
      { context, processInParallel },
    ),
});

/**
 * Powertools' deprecated synchronous processor with the same (asynchronous) record handler: it takes the
 * returned promise as the record's result, so every record counts as a success before its call ends.
 */
const POWERTOOLS_SYNC: Contender = {
  name: "Powertools BatchProcessorSync (deprecated), async handler",
  run: async (records, downstream, { context }) =>
    processPartialResponseSync(
      { Records: records },
      // The catch only keeps a call the kill interrupts from surfacing as an unhandled rejection.
      (record: KinesisStreamRecord) => downstream.callRecord(record).catch(() => undefined),
      new BatchProcessorSync(EventType.KinesisDataStreams),
      { context },
    ),
};

const CONTENDERS = [ENGINE, SEED_LOOP, powertools(true), powertools(false)] as const;

// ---------------------------------------------------------------------------------------------------
// One invocation

interface Result {
  /** Milliseconds until the handler answered; the timeout when it was killed. */
  readonly ms: number;
  readonly killed: boolean;
  /** Records whose effect took place before the answer (or the kill), in that order. */
  readonly applied: readonly number[];
  /** Records the Kinesis checkpoint moves past: before the lowest failed sequence number; none if killed. */
  readonly acknowledged: number;
}

/** The processor's margin, scaled down with a timeout under 60 s. */
const marginFor = (timeoutMs: number) => Math.min(MARGIN_MS, (timeoutMs * MARGIN_MS) / 60_000);

const recordsOf = (keys: readonly string[]) =>
  keys.map((partitionKey, i) => kinesisRecord({ partitionKey, data: {}, sequence: i }));

/** Jitter of the effect within each call, the same for every contender of a key set. */
const arrivalsFor = (n: number, latencyMs: number, seed: number) => {
  const random = seededRandom(seed);
  return Array.from({ length: n }, () => Math.floor(random() * latencyMs));
};

async function invoke(
  contender: Contender,
  keys: readonly string[],
  arrivals: readonly number[],
  latencyMs: number,
  timeoutMs: number,
): Promise<Result> {
  const records = recordsOf(keys);
  const downstream = new Downstream(records, latencyMs, arrivals);
  const context = lambdaContext({ timeoutMs });
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"killed">((resolve) => {
    timer = setTimeout(() => resolve("killed"), timeoutMs);
  });
  const work = contender.run(records, downstream, {
    context,
    marginMs: marginFor(timeoutMs),
  });
  const first = await Promise.race([work, timedOut]);
  const ms = performance.now() - start;
  clearTimeout(timer);
  if (first === "killed") {
    // Lambda counts the timeout as a function error and retries the whole batch (§1.3): no checkpoint.
    downstream.kill();
    const applied = [...downstream.applied];
    await work.catch(() => undefined); // let the abandoned run wind down before the next one starts
    return { ms: timeoutMs, killed: true, applied, acknowledged: 0 };
  }
  const failed = first.batchItemFailures.map((f) => downstream.indexOf(f.itemIdentifier));
  return {
    ms,
    killed: false,
    applied: [...downstream.applied],
    acknowledged: failed.length === 0 ? records.length : Math.min(...failed),
  };
}

// ---------------------------------------------------------------------------------------------------
// 1. Throughput and order

interface KeySet {
  readonly name: string;
  readonly keys: readonly string[];
}

const ZIPF_KEYS = 1_000;
const keySets: KeySet[] = [
  ...[1, 10, 100, 1_000].map((k) => ({
    name: `K = ${k.toLocaleString("en")}, even`,
    keys: spreadKeys(N, k),
  })),
  {
    name: `Zipf (s = 1) over ${ZIPF_KEYS.toLocaleString("en")} keys`,
    keys: zipfKeys(N, ZIPF_KEYS, 1, seededRandom(20261201)),
  },
];

/** The samples of one key set and contender. */
function cell<T>(table: ReadonlyMap<string, ReadonlyMap<string, T>>, set: KeySet, contender: Contender): T {
  const samples = table.get(set.name)?.get(contender.name);
  if (samples === undefined) throw new Error(`no samples for ${contender.name} on ${set.name}`);
  return samples;
}

const UNBOUNDED_MS = 900_000; // Lambda's longest timeout: the throughput runs are never cut short

interface Samples {
  readonly ms: number[];
  readonly overEngine: number[];
  readonly violations: number[];
}

const machine = machineNow();
const log = (line: string) => console.error(line);

// Warm-up (JIT, timers): every contender once on a small batch.
for (const contender of CONTENDERS) {
  const keys = spreadKeys(50, 10);
  await invoke(contender, keys, arrivalsFor(50, L, 1), L, UNBOUNDED_MS);
}

const throughput = new Map<string, Map<string, Samples>>(
  keySets.map((s) => [
    s.name,
    new Map(CONTENDERS.map((c) => [c.name, { ms: [], overEngine: [], violations: [] } as Samples])),
  ]),
);
for (let repeat = 0; repeat < REPEATS; repeat++) {
  for (const [s, set] of keySets.entries()) {
    const arrivals = arrivalsFor(N, L, 1_000 + s);
    // The order of the contenders turns from repeat to repeat, so a busy moment does not always hit the same one.
    const order = CONTENDERS.map((_, i) => CONTENDERS[(i + repeat) % CONTENDERS.length] as Contender);
    const ms = new Map<string, number>();
    for (const contender of order) {
      const result = await invoke(contender, set.keys, arrivals, L, UNBOUNDED_MS);
      if (result.killed || result.acknowledged !== N || result.applied.length !== N) {
        throw new Error(`${contender.name} on ${set.name}: not every record applied and acknowledged`);
      }
      const samples = cell(throughput, set, contender);
      samples.ms.push(result.ms);
      samples.violations.push(orderViolations(set.keys, result.applied));
      ms.set(contender.name, result.ms);
      log(`repeat ${repeat + 1}/${REPEATS}, ${set.name}, ${contender.name}: ${result.ms.toFixed(0)} ms`);
    }
    for (const contender of CONTENDERS) {
      const samples = cell(throughput, set, contender);
      samples.overEngine.push((ms.get(contender.name) ?? 0) / (ms.get(ENGINE.name) ?? 1));
    }
  }
}

const mediansOf = (contender: Contender) =>
  keySets.map((set) => ({
    set,
    ms: spreadOf(cell(throughput, set, contender).ms).median,
  }));
const lowHigh = (xs: number[]) => `${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}`;
/** The lowest and highest median, over the key sets, of a contender's time over N x L. */
const rangeOverSequential = (contender: Contender) =>
  lowHigh(mediansOf(contender).map((m) => m.ms / (N * L)));
/** The same over each key set's order-preserving bound. */
const rangeOverBound = (contender: Contender) =>
  lowHigh(mediansOf(contender).map((m) => m.ms / orderPreservingBoundMs(m.set.keys, CONCURRENCY, L)));

const throughputRows = keySets.flatMap((set) => {
  const bound = orderPreservingBoundMs(set.keys, CONCURRENCY, L);
  const distinct = new Set(set.keys).size;
  return CONTENDERS.map((contender) => {
    const samples = cell(throughput, set, contender);
    const ms = spreadOf(samples.ms);
    const overBound: Spread = { median: ms.median / bound, min: ms.min / bound, max: ms.max / bound };
    return `| ${set.name} | ${distinct}, ${hottestKey(set.keys)} | ${bound} | ${contender.name} | ${formatSpread(ms)} | ${formatSpread(overBound, 2)} | ${contender === ENGINE ? "1" : formatSpread(spreadOf(samples.overEngine), 2)} | ${formatSpread(spreadOf(samples.violations))} |`;
  });
});

// ---------------------------------------------------------------------------------------------------
// 2. The slow-downstream incident, 10x faster: 100 records x 60 ms against a 6 s timeout

const INCIDENT = { records: 100, latencyMs: 60, timeoutMs: 6_000 } as const;
const incidentMarginMs = marginFor(INCIDENT.timeoutMs);
const incidentSets: KeySet[] = [
  { name: "10 keys x 10 records", keys: spreadKeys(INCIDENT.records, 10) },
  { name: "1 key (all 100 records)", keys: spreadKeys(INCIDENT.records, 1) },
];
const INCIDENT_CONTENDERS = [...CONTENDERS, POWERTOOLS_SYNC] as const;

interface IncidentSamples {
  readonly answeredMs: number[];
  killed: number;
  readonly applied: number[];
  readonly acknowledged: number[];
  readonly redelivered: number[];
  /** Applied, and redelivered anyway: the effect happens again unless the handler is idempotent. */
  readonly twice: number[];
  /** Acknowledged while the record's effect had not taken place: lost if the call then fails. */
  readonly unapplied: number[];
  readonly violations: number[];
}

const incident = new Map<string, Map<string, IncidentSamples>>(
  incidentSets.map((s) => [
    s.name,
    new Map(
      INCIDENT_CONTENDERS.map((c) => [
        c.name,
        {
          answeredMs: [],
          killed: 0,
          applied: [],
          acknowledged: [],
          redelivered: [],
          twice: [],
          unapplied: [],
          violations: [],
        } as IncidentSamples,
      ]),
    ),
  ]),
);
for (let repeat = 0; repeat < REPEATS; repeat++) {
  for (const [s, set] of incidentSets.entries()) {
    const arrivals = arrivalsFor(INCIDENT.records, INCIDENT.latencyMs, 2_000 + s);
    for (const contender of INCIDENT_CONTENDERS) {
      const r = await invoke(contender, set.keys, arrivals, INCIDENT.latencyMs, INCIDENT.timeoutMs);
      const samples = cell(incident, set, contender);
      if (r.killed) samples.killed += 1;
      else samples.answeredMs.push(r.ms);
      const applied = new Set(r.applied);
      samples.applied.push(applied.size);
      samples.acknowledged.push(r.acknowledged);
      samples.redelivered.push(INCIDENT.records - r.acknowledged);
      samples.twice.push(r.applied.filter((i) => i >= r.acknowledged).length);
      samples.unapplied.push(
        Array.from({ length: r.acknowledged }, (_, i) => i).filter((i) => !applied.has(i)).length,
      );
      samples.violations.push(orderViolations(set.keys, r.applied));
      log(
        `incident ${repeat + 1}/${REPEATS}, ${set.name}, ${contender.name}: ${r.killed ? "killed" : `answered at ${r.ms.toFixed(0)} ms`}, ${applied.size} applied, ${r.acknowledged} acknowledged`,
      );
    }
  }
}

const incidentRows = incidentSets.flatMap((set) =>
  INCIDENT_CONTENDERS.map((contender) => {
    const s = cell(incident, set, contender);
    const answered =
      s.killed === REPEATS
        ? `killed at ${INCIDENT.timeoutMs} ms`
        : `${formatSpread(spreadOf(s.answeredMs))} ms${s.killed > 0 ? ` (killed in ${s.killed} of ${REPEATS})` : ""}`;
    const f = (xs: number[]) => formatSpread(spreadOf(xs));
    return `| ${set.name} | ${contender.name} | ${answered} | ${f(s.applied)} | ${f(s.acknowledged)} | ${f(s.redelivered)} | ${f(s.twice)} | ${f(s.unapplied)} | ${f(s.violations)} |`;
  }),
);

// ---------------------------------------------------------------------------------------------------
// The page

const command = `npm run bench:peers${quick ? " -- --quick" : cli.repeats !== undefined ? ` -- --repeats ${REPEATS}` : ""}`;
const doc = `# The batch engine against the seed loop and Powertools

Generated by \`${command}\` (tools/bench/src/batch-peers.ts), ${describeMachine(machine)}.
${quick ? "\n**Quick run** (`--quick`: N = 200, one repeat): a check that the benchmark runs, not figures to quote.\n" : ""}
Every contender handles the same Kinesis batches (records in the shape Lambda delivers, §1.7) with the same
record handler: one call to a simulated downstream per record, taking L ms (timers). The downstream applies
the record's effect at a point drawn within the call (seeded, the same for every contender), as the request
leg of a real round trip varies; so two calls of one key in flight together can apply out of order, as
against a real service, and a contender that keeps one call per key in flight never does.

- **engine**: \`processKinesisBatch\` (packages/batch), C = ${CONCURRENCY} partition keys at once (the processor's
  default), each key's records in shard order, its deadline from the context with the processor's margin
  (${MARGIN_MS / 1000} s; in the incident ${incidentMarginMs} ms, scaled with its timeout). The throughput runs have Lambda's longest timeout,
  900 s, which none comes near.
- **seed loop**: \`for (const record of event.Records) await handle(record)\`, answering with the first
  failed record (the checkpoint, §1.4): the pattern the project started from.
- **Powertools parallel**: \`processPartialResponse\` with \`new BatchProcessor(EventType.KinesisDataStreams)\`
  from @aws-lambda-powertools/batch ${POWERTOOLS_VERSION}: its default runs every record of the batch at once
  (\`Promise.all\`, no limit, no regard to partition key: §8).
- **Powertools sequential**: the same with \`processInParallel: false\`, Powertools' sequential mode for
  asynchronous handlers in ${POWERTOOLS_VERSION}. (\`processPartialResponseSync\` with \`BatchProcessorSync\` is
  deprecated in ${POWERTOOLS_VERSION} and calls the handler without awaiting it: with an asynchronous handler
  it answers before any call ends, see the incident; with a blocking handler its time is the sequential
  mode's.)

## Throughput and order: N = ${N.toLocaleString("en")} records, L = ${L} ms

Wall time of one invocation, median of ${REPEATS} repeat${REPEATS === 1 ? "" : "s"} (min-max), after a warm-up; the contenders
take turns in a rotating order within each repeat. "x bound" is the wall time over the order-preserving
bound max(ceil(N/C), max_k n_k) x L with C = ${CONCURRENCY}: the shortest time in which ${CONCURRENCY} calls at a
time can apply the batch keeping each key's order. "x engine" is the ratio to the engine's time in the same
repeat. "Order violations" counts records applied while an earlier record of the same key had not been applied
yet. The Zipf key set draws each record's key from ${ZIPF_KEYS.toLocaleString("en")} keys with probability
proportional to 1 / rank (seeded).

| key set | keys used, max n_k | bound (ms) | contender | wall (ms) | x bound | x engine | order violations |
|---|---|---|---|---|---|---|---|
${throughputRows.join("\n")}

Powertools' parallel mode is faster than the bound because it does not keep order: it starts all
${N.toLocaleString("en")} calls at once, and applies a key's records out of order as soon as a key holds
more than one record. The sequential loop and Powertools' sequential mode keep order and take N x L
(${(N * L).toLocaleString("en")} ms) whatever the keys: in this run ${rangeOverSequential(SEED_LOOP)} x that for the loop and
${rangeOverSequential(powertools(false))} x for the sequential mode, which is how late this machine's timers fired.
The engine keeps order, at ${rangeOverBound(ENGINE)} x the bound (medians per key set), the same lateness
included; with one key its bound is N x L as well.

## The slow-downstream incident

A downstream slows to 600 ms a call while a batch of 100 records is in flight and the function's timeout
is 60 s: 100 x 600 ms is the whole timeout. Run here 10x faster: **60 ms a call, a 6 s timeout**
(the engine's margin likewise ${incidentMarginMs} ms). At the timeout Lambda kills the invocation: its answer is never
sent, the timeout counts as a function error and the whole batch is retried (§1.3); records whose effect
already took place are applied again unless the handler is idempotent. An answer in time moves the
checkpoint to the lowest failed sequence number (§1.4): records before it are acknowledged, the rest
redelivered. Median of ${REPEATS} repeat${REPEATS === 1 ? "" : "s"} (min-max). The order-preserving bound is 600 ms for 10 keys x 10 records and
6,000 ms, the whole timeout, for one key.

| keys | contender | answered | applied before the answer or the kill | acknowledged | redelivered | applied and redelivered | acknowledged before applied | order violations |
|---|---|---|---|---|---|---|---|---|
${incidentRows.join("\n")}

Reading the table: the sequential loop and Powertools' sequential mode apply nearly every record and
acknowledge none, so the next invocation meets the same slow downstream with the same batch: the shard
stays stuck while the work is done again and again. The engine answers before the timeout: on one key it
acknowledges what it applied (the checkpoint moves and the next invocation starts after it), with ten keys it
finishes. Powertools' parallel mode finishes within one call's time and acknowledges everything, having
applied records of one key out of order. \`BatchProcessorSync\` with the same asynchronous handler reports every
record as a success before any call has ended: acknowledged records whose effect had not taken place, lost
if a call then fails.
`;

await writePage(join(root, "docs/benchmarks/batch-peers.md"), doc);
log("wrote docs/benchmarks/batch-peers.md");
