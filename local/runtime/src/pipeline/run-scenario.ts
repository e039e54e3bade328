/** Drives a scenario through a running LocalPipeline and accounts for every input: the ledger. */
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { SendMessageBatchCommand } from "@aws-sdk/client-sqs";
import { putRecords } from "@mcp-pipeline/aws";
import { replayQuarantine } from "@mcp-pipeline/recovery";
import { sleep } from "@mcp-pipeline/retry";
import { type DrainedMessage, drainQueue, peekQueue } from "./drain-queue.js";
import { listGivenUp } from "./given-up.js";
import {
  callIdOf,
  callsToRead,
  emptyObserved,
  failureRangeOf,
  isApplied,
  missingInputs,
  type Observed,
  type PutRecord,
  type ScenarioInputs,
  scenarioInputs,
} from "./input-ledger.js";
import type { PartialSplits } from "./partial-splits.js";
import type { LocalPipeline } from "./pipeline.js";
import type { ProcessorTrafficCounts } from "./processor-traffic.js";
import { readCalls } from "./read-calls.js";
import { judgeRepresentative, type Representativeness } from "./representative.js";
import type { JobItem, Scenario } from "./scenario.js";

export interface Summary {
  readonly environment: string;
  readonly timeScale: number;
  /** With bisect on, whether a partial answer's split used a retry (§1.4, undocumented); null: no split. */
  readonly partialSplits: PartialSplits;
  readonly durationMs: number;
  /** When each stage of the run ended, in ms from its start: where its duration went. */
  readonly phasesMs: RunPhases;
  readonly eventsIn: number;
  readonly streamRecordsProcessed: number;
  readonly jobsIn: number;
  /** Poison jobs among jobsIn: the DLQs are where they belong. */
  readonly poisonJobs: number;
  /**
   * Events the processor applied: the scenario's and the lifecycle events the workers publish about their
   * jobs (started, completed...), which reach it through the same stream. Hence more than eventsIn.
   */
  readonly applied: number;
  /** The scenario's own valid events (duplicates counted once) found applied at the end. */
  readonly scenarioEventsApplied: number;
  readonly duplicatesSkipped: number;
  readonly quarantined: number;
  readonly retried: number;
  readonly bisected: number;
  readonly sentToDlq: number;
  readonly toFailureDestination: number;
  /** Records dlq-redrive re-read from the stream into the quarantine. */
  readonly quarantinedByDlqRedrive: number;
  /** Records put back into the stream from the quarantine once the fault was gone. */
  readonly replayed: number;
  /** Inputs found nowhere once the pipeline went quiet. A run that runs out of time judges nothing: 0. */
  readonly lost: number;
  /**
   * The deadline (--timeout) passed while inputs were still unaccounted for: they were still in flight
   * (being retried, waiting for a visibility timeout...), which is not loss. `missing` lists them.
   */
  readonly timedOut: boolean;
  /** Inputs not yet accounted for when the run timed out (0 when it did not). */
  readonly inFlight: number;
  readonly latencyMs: {
    readonly p50: number;
    readonly p90: number;
    readonly p95: number;
    readonly p99: number;
  };
  readonly maxIteratorAgeMs: number;
  /**
   * The processor's DynamoDB requests over the run (counted at the proxy in front of the emulator) and
   * the stream records it received: the scenario's and the workers' lifecycle events, and replays.
   */
  readonly processorDynamoDb: ProcessorTrafficCounts;
  readonly functions: Record<
    string,
    { invocations: number; errors: number; timeouts: number; coldStarts: number; maxMemoryUsedMb: number }
  >;
  /** The inputs not found anywhere (or, after a timeout, not yet found), by kind. */
  readonly missing: readonly string[];
  /** Whether timeouts dominated the run (this machine's load, not the pipeline): representative.ts. */
  readonly representativeness: Representativeness;
}

/**
 * Milliseconds from the run's start to: every input put (the stream and both queues); every input first
 * accounted for; the wait's end (the pipeline drained, or idle for the fallback quiet period); the
 * replayed records applied. null: not reached (the run timed out first, or had nothing to replay).
 */
export interface RunPhases {
  readonly inputsIn: number;
  readonly accounted: number | null;
  readonly settled: number | null;
  readonly replayApplied: number | null;
}

export interface Progress {
  readonly elapsedMs: number;
  readonly accounted: number;
  readonly expected: number;
  readonly applied: number;
  /** Objects in the quarantine bucket: unreadable records and what dlq-redrive stored, once each. */
  readonly quarantineObjects: number;
  readonly dlq: number;
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

async function sendJobs(pipeline: LocalPipeline, queueUrl: string, jobs: readonly JobItem[], fifo: boolean) {
  const ids = new Map<JobItem, string>();
  for (let i = 0; i < jobs.length; i += 10) {
    const chunk = jobs.slice(i, i + 10);
    const response = await pipeline.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: chunk.map((job, n) => ({
          Id: String(n),
          MessageBody: job.body,
          ...(fifo
            ? {
                MessageGroupId: job.group,
                MessageDeduplicationId: `${i + n}-${job.kind === "job" ? job.callId : "poison"}`,
              }
            : {}),
        })),
      }),
    );
    if ((response.Failed ?? []).length > 0)
      throw new Error(`SendMessageBatch refused ${response.Failed?.length} jobs`);
    for (const ok of response.Successful ?? []) ids.set(chunk[Number(ok.Id)] as JobItem, ok.MessageId ?? "");
  }
  return ids;
}

async function quarantinedSequences(pipeline: LocalPipeline): Promise<Set<string>> {
  const out = new Set<string>();
  let token: string | undefined;
  do {
    const page = await pipeline.s3.send(
      new ListObjectsV2Command({
        Bucket: pipeline.names.quarantineBucket,
        // Records only: a replay's journals (replays/) name records, they are none.
        Prefix: "kinesis/",
        ...(token ? { ContinuationToken: token } : {}),
      }),
    );
    for (const object of page.Contents ?? [])
      out.add(
        object.Key?.split("/")
          .at(-1)
          ?.replace(/\.json$/, "") ?? "",
      );
    token = page.NextContinuationToken;
  } while (token);
  return out;
}

/**
 * Puts the scenario's records into the stream and its jobs into the two queues; returns its inputs, with
 * where Kinesis stored each record and the messageId SQS gave each job.
 */
async function putInputs(pipeline: LocalPipeline, scenario: Scenario): Promise<ScenarioInputs> {
  // The stream and the two queues are independent inputs: put at once, so the workers start on their
  // jobs while the records are still being put.
  const [result, jobIds, fifoIds] = await Promise.all([
    putRecords(
      pipeline.kinesis,
      { streamName: pipeline.names.stream },
      scenario.stream.map((s) => ({ data: s.data, partitionKey: s.partitionKey })),
    ),
    sendJobs(pipeline, pipeline.queues.toolJobs.url, scenario.jobs, false),
    sendJobs(pipeline, pipeline.queues.sessionJobs.url, scenario.fifoJobs, true),
  ]);
  if (result.rejected.length > 0)
    throw new Error(`${result.rejected.length} stream records could not be put`);
  const puts: PutRecord[] = scenario.stream.map((item) => ({ item, shardId: "", sequenceNumber: "" }));
  for (const w of result.written)
    puts[w.index] = {
      item: (puts[w.index] as PutRecord).item,
      shardId: w.shardId,
      sequenceNumber: w.sequenceNumber,
    };
  return scenarioInputs(scenario, puts, jobIds, fifoIds);
}

/** Reads the calls still open and the quarantine's contents into `observed`. */
async function observeStores(
  pipeline: LocalPipeline,
  inputs: ScenarioInputs,
  observed: Observed,
): Promise<void> {
  const [, quarantined] = await Promise.all([
    readCalls(
      pipeline.dynamodb,
      pipeline.names.toolCallsTable,
      observed.calls,
      callsToRead(inputs, observed),
    ),
    quarantinedSequences(pipeline),
  ]);
  observed.quarantined = quarantined;
}

/**
 * Drains the DLQs into `observed` (kept by messageId): a peek of the FIFO DLQ hid a group's second poison
 * job behind its first (§3). The failure queue is dlq-redrive's: read, not taken.
 */
async function observeQueues(pipeline: LocalPipeline, observed: Observed): Promise<void> {
  const keepDead = (page: readonly DrainedMessage[]) => {
    for (const d of page) observed.dead.set(d.id, d);
  };
  const [, , failed] = await Promise.all([
    drainQueue(pipeline.sqs, pipeline.queues.toolJobsDlq.url, keepDead),
    drainQueue(pipeline.sqs, pipeline.queues.sessionJobsDlq.url, keepDead),
    peekQueue(pipeline.sqs, pipeline.queues.streamFailures.url),
  ]);
  for (const f of failed) observed.failures.set(f.id, failureRangeOf(f.body));
}

/** Tells the caller how far the run is, given how many of the expected outcomes it has not seen yet. */
type ReportProgress = (outstanding: number) => void;

function progressReporter(
  pipeline: LocalPipeline,
  inputs: ScenarioInputs,
  observed: Observed,
  started: number,
  onProgress: ((p: Progress) => void) | undefined,
): ReportProgress {
  return (outstanding) =>
    onProgress?.({
      elapsedMs: Date.now() - started,
      accounted: inputs.expected - outstanding,
      expected: inputs.expected,
      applied: pipeline.metrics.sum("processor", "Applied"),
      quarantineObjects: observed.quarantined.size,
      dlq: observed.dead.size,
    });
}

interface AccountingEnd {
  /** The inputs found nowhere when the wait ended. */
  readonly missing: string[];
  /** The deadline passed with inputs still open. */
  readonly timedOut: boolean;
  readonly accountedAt: number | null;
  readonly settledAt: number | null;
}

/**
 * Reads the stores and queues round after round until every input is accounted for and the pipeline has
 * drained, or the deadline passes.
 */
async function waitUntilAccounted(
  pipeline: LocalPipeline,
  inputs: ScenarioInputs,
  observed: Observed,
  inputsIn: number,
  deadline: number,
  progress: ReportProgress,
): Promise<AccountingEnd> {
  let accountedAt: number | null = null;
  let lastInvocations = -1;
  let quietSince = Date.now();
  for (;;) {
    await observeStores(pipeline, inputs, observed);
    const missing = missingInputs(inputs, observed);
    const invocations = [...pipeline.functions.values()].reduce((n, f) => n + f.stats.invocations, 0);
    if (invocations !== lastInvocations) {
      lastInvocations = invocations;
      quietSince = Date.now();
    }
    progress(missing.length);
    // Done when everything is accounted for and the pipeline has drained: the workers' own events may
    // still be flowing through the processor, and dlq-redrive may still be storing a failed batch's
    // records for the replay below. Should the drain never show (a failure record dlq-redrive keeps
    // failing on), the functions' being idle for 1.5 s ends the wait, as it did before the drain was known.
    if (missing.length === 0) accountedAt ??= Date.now();
    if (missing.length === 0 && (pipeline.drained(inputsIn) || Date.now() - quietSince > 1_500))
      return { missing, timedOut: false, accountedAt, settledAt: Date.now() };
    if (Date.now() > deadline) return { missing, timedOut: missing.length > 0, accountedAt, settledAt: null };
    if (missing.length > 0) await observeQueues(pipeline, observed);
    // Near the end a round reads few calls and the pipeline's drain is only a poll interval away: look
    // again sooner. While many inputs are open, a round reads many calls; it waits longer between them.
    await sleep(missing.length > 100 ? 500 : 100);
  }
}

interface ReplayEnd {
  readonly replayed: number;
  /** Valid events still not applied when the deadline passed (none when every one was). */
  readonly unapplied: readonly PutRecord[];
  readonly appliedAt: number | null;
}

/**
 * The downstream recovers: faults off, then what the processor gave up on goes back into the stream
 * (docs/operations.md), and every valid event must end up applied. Null: nothing to replay, or no time
 * left to.
 */
async function replayGivenUp(
  pipeline: LocalPipeline,
  inputs: ScenarioInputs,
  observed: Observed,
  deadline: number,
  progress: ReportProgress,
): Promise<ReplayEnd | null> {
  const givenUp = await listGivenUp(pipeline.s3, pipeline.names.quarantineBucket);
  if (givenUp.length === 0 || Date.now() >= deadline) return null;
  pipeline.faultsActive = false;
  const { replayed } = await replayQuarantine(
    pipeline.s3,
    pipeline.kinesis,
    pipeline.names.quarantineBucket,
    givenUp,
    { streamName: pipeline.names.stream, ratePerSecond: 500 },
  );
  for (;;) {
    await readCalls(
      pipeline.dynamodb,
      pipeline.names.toolCallsTable,
      observed.calls,
      inputs.events.map(callIdOf).filter((id) => !isApplied(observed, id)),
    );
    const unapplied = inputs.events.filter((e) => !isApplied(observed, callIdOf(e)));
    progress(unapplied.length);
    if (unapplied.length === 0) return { replayed, unapplied, appliedAt: Date.now() };
    if (Date.now() > deadline) return { replayed, unapplied, appliedAt: null };
    // A round reads only the replayed calls still unapplied: a few dozen keys.
    await sleep(100);
  }
}

/** Each function's counters over the run. */
function functionStats(pipeline: LocalPipeline): Summary["functions"] {
  return Object.fromEntries(
    [...pipeline.functions.entries()].map(([name, f]) => [
      name,
      {
        invocations: f.stats.invocations,
        errors: f.stats.errors,
        timeouts: f.stats.timeouts,
        coldStarts: f.stats.coldStarts,
        maxMemoryUsedMb: f.stats.maxMemoryUsedMb,
      },
    ]),
  );
}

/** How long each valid job took, from its enqueue to the finish its call item records. */
function jobLatencies(inputs: ScenarioInputs, observed: Observed): Summary["latencyMs"] {
  const latencies = inputs.validJobs.flatMap((job) => {
    const finishedAt = observed.calls.get(job.callId)?.finishedAt;
    return typeof finishedAt === "string" ? [Date.parse(finishedAt) - job.enqueuedAt] : [];
  });
  return {
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
  };
}

/**
 * Puts the scenario into the stream and the queues, waits until every input is accounted for (applied,
 * quarantined, in a DLQ or in the on-failure destination) or `timeoutMs` passes, and returns the summary.
 * An input found nowhere is lost; the run's promise is that this count is 0.
 */
export async function runScenario(
  pipeline: LocalPipeline,
  scenario: Scenario,
  options: { environment: string; timeScale: number; timeoutMs: number; onProgress?: (p: Progress) => void },
): Promise<Summary> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  const inputs = await putInputs(pipeline, scenario);
  const inputsIn = Date.now();
  const observed = emptyObserved();
  const progress = progressReporter(pipeline, inputs, observed, started, options.onProgress);

  const accounting = await waitUntilAccounted(pipeline, inputs, observed, inputsIn, deadline, progress);
  const replay = await replayGivenUp(pipeline, inputs, observed, deadline, progress);
  const timedOut = accounting.timedOut || (replay?.unapplied.length ?? 0) > 0;
  const missing = [
    ...accounting.missing,
    ...(replay?.unapplied ?? []).map((e) => `event ${callIdOf(e)} (not applied after replay)`),
  ];

  const representativeness = representativenessOf(pipeline, inputs, observed, options.timeScale);
  const sinceStart = (at: number | null) => (at === null ? null : at - started);
  return {
    environment: options.environment,
    timeScale: options.timeScale,
    partialSplits: pipeline.partialSplits,
    durationMs: Date.now() - started,
    phasesMs: {
      inputsIn: inputsIn - started,
      accounted: sinceStart(accounting.accountedAt),
      settled: sinceStart(accounting.settledAt),
      replayApplied: sinceStart(replay?.appliedAt ?? null),
    },
    ...inputCounts(pipeline, scenario, inputs, observed, replay),
    lost: timedOut ? 0 : missing.length,
    timedOut,
    inFlight: timedOut ? missing.length : 0,
    latencyMs: jobLatencies(inputs, observed),
    maxIteratorAgeMs: pipeline.kinesisEsm?.stats.maxIteratorAgeMs ?? 0,
    processorDynamoDb: pipeline.processorTraffic.counts(),
    functions: functionStats(pipeline),
    missing: missing.slice(0, 20),
    representativeness,
  };
}

/** Whether timeouts dominated the run, from each function's invocations and timeouts and the jobs' ends. */
function representativenessOf(
  pipeline: LocalPipeline,
  inputs: ScenarioInputs,
  observed: Observed,
  timeScale: number,
): Summary["representativeness"] {
  return judgeRepresentative({
    timeScale,
    functions: Object.fromEntries(
      [...pipeline.functions.entries()].map(([name, f]) => [
        name,
        {
          invocations: f.stats.invocations,
          timeouts: f.stats.timeouts,
          timeoutMs: f.definition.timeoutMs,
          timeoutSeconds: pipeline.timeoutSecondsOf(name),
        },
      ]),
    ),
    jobsIn: inputs.allJobs.length,
    poisonJobs: inputs.allJobs.length - inputs.validJobs.length,
    sentToDlq: observed.dead.size,
  });
}

/** What went in and where it went: the summary's counts, from the mappings', the functions' and the ledger's. */
function inputCounts(
  pipeline: LocalPipeline,
  scenario: Scenario,
  inputs: ScenarioInputs,
  observed: Observed,
  replay: ReplayEnd | null,
) {
  const kinesis = pipeline.kinesisEsm?.stats;
  const sqsRetried = [...pipeline.sqsEsms.values()].reduce(
    (n, s) => n + s.stats.reportedMessages + s.stats.functionErrors,
    0,
  );
  return {
    eventsIn: scenario.stream.length,
    streamRecordsProcessed: kinesis?.polledRecords ?? 0,
    jobsIn: inputs.allJobs.length,
    poisonJobs: inputs.allJobs.length - inputs.validJobs.length,
    applied: pipeline.metrics.sum("processor", "Applied"),
    scenarioEventsApplied: new Set(inputs.events.map(callIdOf).filter((id) => isApplied(observed, id))).size,
    duplicatesSkipped:
      pipeline.metrics.sum("processor", "Duplicates") + pipeline.metrics.sum("worker", "Duplicates"),
    quarantined: pipeline.metrics.sum("processor", "Quarantined"),
    retried: (kinesis?.retriedBatches ?? 0) + sqsRetried,
    // Both kinds of split: in halves after a function error, at the failed record of a partial answer (§1.4).
    bisected: (kinesis?.bisections ?? 0) + (kinesis?.partialSplits ?? 0),
    sentToDlq: observed.dead.size,
    toFailureDestination: kinesis?.discardedRecords ?? 0,
    quarantinedByDlqRedrive: pipeline.metrics.sum("dlq-redrive", "RecordsQuarantined"),
    replayed: replay?.replayed ?? 0,
  } satisfies Partial<Summary>;
}
