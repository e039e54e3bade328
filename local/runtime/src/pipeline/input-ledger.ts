/**
 * The ledger of a scenario run: every input put, and where each is found once the pipeline has dealt with
 * it (applied, quarantined, in a DLQ, or in a range the stream gave up on). An input found nowhere is
 * missing.
 */
import { compareSequenceNumbers } from "@mcp-pipeline/aws";
import type { DrainedMessage } from "./drain-queue.js";
import type { JobItem, Scenario } from "./scenario.js";

/** A stream record as put: where Kinesis stored it. */
export interface PutRecord {
  readonly item: Scenario["stream"][number];
  readonly shardId: string;
  readonly sequenceNumber: string;
}

/** A batch the Kinesis mapping gave up on: its on-failure destination's record of it (§1.6). */
export interface FailureRange {
  readonly shardId: string;
  readonly start: string;
  readonly end: string;
}

export type ValidJob = Extract<JobItem, { kind: "job" }>;

/** What the run must account for. */
export interface ScenarioInputs {
  /** Valid events put (stuck ones included, duplicates not: the same call once applied is enough). */
  readonly events: readonly PutRecord[];
  readonly poisonRecords: readonly PutRecord[];
  /** Both queues' jobs, standard first. */
  readonly allJobs: readonly JobItem[];
  readonly validJobs: readonly ValidJob[];
  /** The messageIds SQS gave the poison jobs. */
  readonly poisonJobIds: ReadonlySet<string>;
  /** How many outcomes the run waits for. */
  readonly expected: number;
}

/** What the run has read of the pipeline so far. */
export interface Observed {
  /** tool-calls items by callId. */
  readonly calls: Map<string, Record<string, unknown>>;
  /** Sequence numbers of the objects in the quarantine bucket. */
  quarantined: ReadonlySet<string>;
  /** What the DLQs held, drained into the run's hands, by messageId. */
  readonly dead: Map<string, DrainedMessage>;
  /** The failure queue's records, by messageId. */
  readonly failures: Map<string, FailureRange>;
}

export function emptyObserved(): Observed {
  return { calls: new Map(), quarantined: new Set(), dead: new Map(), failures: new Map() };
}

export function callIdOf(put: PutRecord): string {
  return (put.item as { callId: string }).callId;
}

/** The processor applied the call's `requested` event (every valid event of a call leads to it). */
export function isApplied(observed: Observed, callId: string): boolean {
  return Boolean(observed.calls.get(callId)?.requestedAt);
}

/** The call's job ran to its end: completed, or failed for good. */
export function isSettled(observed: Observed, callId: string): boolean {
  return ["completed", "failed"].includes(String(observed.calls.get(callId)?.status));
}

/**
 * The inputs of a scenario once put: `puts` are its stream records in order (where Kinesis stored each),
 * `jobIds` and `fifoIds` the messageIds SQS gave the jobs of each queue.
 */
export function scenarioInputs(
  scenario: Scenario,
  puts: readonly PutRecord[],
  jobIds: ReadonlyMap<JobItem, string>,
  fifoIds: ReadonlyMap<JobItem, string>,
): ScenarioInputs {
  const events = puts.filter((p) => p.item.kind === "event" || p.item.kind === "stuck");
  const poisonRecords = puts.filter((p) => p.item.kind === "poison");
  const allJobs = [...scenario.jobs, ...scenario.fifoJobs];
  const validJobs = allJobs.filter((j): j is ValidJob => j.kind === "job");
  const poisonJobIds = new Set(
    allJobs.filter((j) => j.kind === "poison").map((j) => jobIds.get(j) ?? fifoIds.get(j) ?? ""),
  );
  const expected = events.length + poisonRecords.length + validJobs.length + poisonJobIds.size;
  return { events, poisonRecords, allJobs, validJobs, poisonJobIds, expected };
}

/** The callIds whose items the run still needs to read: events not applied, jobs not settled. */
export function callsToRead(inputs: ScenarioInputs, observed: Observed): string[] {
  return [
    ...inputs.events.map(callIdOf).filter((id) => !isApplied(observed, id)),
    ...inputs.validJobs.map((j) => j.callId).filter((id) => !isSettled(observed, id)),
  ];
}

function inFailureRange(put: PutRecord, failures: ReadonlyMap<string, FailureRange>): boolean {
  return [...failures.values()].some(
    (f) =>
      f.shardId === put.shardId &&
      compareSequenceNumbers(put.sequenceNumber, f.start) >= 0 &&
      compareSequenceNumbers(put.sequenceNumber, f.end) <= 0,
  );
}

/** The inputs found nowhere in what was observed, each named by kind. */
export function missingInputs(inputs: ScenarioInputs, observed: Observed): string[] {
  const missing: string[] = [];
  for (const e of inputs.events) {
    // Applied, or given up on and kept: in the quarantine (dlq-redrive re-read it) or in a failed range.
    const kept = observed.quarantined.has(e.sequenceNumber) || inFailureRange(e, observed.failures);
    if (!isApplied(observed, callIdOf(e)) && !kept) missing.push(`event ${callIdOf(e)}`);
  }
  for (const p of inputs.poisonRecords) {
    if (!observed.quarantined.has(p.sequenceNumber) && !inFailureRange(p, observed.failures))
      missing.push(`poison record ${p.sequenceNumber}`);
  }
  // A poison job is in a DLQ either as the worker sent it (its source messageId in an attribute) or as
  // SQS moved it there after maxReceiveCount receives (a worker that timed out on every receive): such a
  // message keeps its messageId and carries no attribute of ours (§2.3).
  const dead = [...observed.dead.values()];
  const deadIds = new Set(dead.flatMap((d) => [d.id, d.attributes["pipeline.source.messageId"] ?? ""]));
  const deadBodies = new Set(dead.map((d) => d.body));
  for (const job of inputs.validJobs) {
    if (!isSettled(observed, job.callId) && !deadBodies.has(job.body)) missing.push(`job ${job.callId}`);
  }
  for (const id of inputs.poisonJobIds) if (!deadIds.has(id)) missing.push(`poison job ${id}`);
  return missing;
}

/** The range of a failure-queue message: the Kinesis mapping's record of a batch it gave up on (§1.6). */
export function failureRangeOf(body: string): FailureRange {
  const info = (
    JSON.parse(body) as {
      KinesisBatchInfo: { shardId: string; startSequenceNumber: string; endSequenceNumber: string };
    }
  ).KinesisBatchInfo;
  return { shardId: info.shardId, start: info.startSequenceNumber, end: info.endSequenceNumber };
}
