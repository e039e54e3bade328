/**
 * The ledger: every input the run produced, and what the harness saw become of it. Pure bookkeeping (no
 * I/O): the run feeds it the doors' writes, the mappings' hand-overs and the DLQ drains, in O(1) per
 * observation, and the verdict (verdict.ts) judges once at the end, so 100,000 events cost memory, not time.
 *
 * An input is a stream record (a lifecycle event, or poison) or a job message. What settles an input is
 * only what the harness saw outside the product: a record's event written into its call's item (the
 * DynamoDB door), its bytes stored in the quarantine (the S3 door), its range in a failure record that
 * SQS dead-lettered, a job's call left in a terminal status by a write, a message in a DLQ.
 *
 * What it relies on of AWS (docs/aws-semantics.md): every mapping is at least once (§1.3, §2.1, §3), so
 * an input may be delivered and applied again, and an effect is counted by what was written, once; a
 * record given up by the Kinesis mapping leaves it for the on-failure destination (§1.6) without an
 * invocation when it is too old (§1.3, §9.1 item 4).
 */
import type { DrainedMessage } from "@mcp-pipeline/local-runtime";
import { CallEffects } from "./call-effects.js";
import type { CallWrite, EmulatorErrorTouch, FaultTouch } from "./doors.js";
import { FifoHolds } from "./fifo-holds.js";
import type { PutEvent } from "./oracle.js";
import { Tally } from "./tally.js";
import { type InvocationWindow, type JobIncident, RunCause } from "./tool-runs.js";

export const Phase = { Main: "main", Replay: "replay" } as const;
export type Phase = (typeof Phase)[keyof typeof Phase];

/** One stream record produced: its place in the stream and what it carries (read back from its bytes). */
export interface StreamInput {
  readonly kind: "event" | "stuck" | "duplicate" | "poison";
  readonly key: string;
  readonly shardId: string;
  readonly sequenceNumber: string;
  /** The lifecycle event, for a valid record. */
  readonly event: PutEvent | undefined;
  /** The bytes put (the plan's own array, not a copy): a quarantine object must hold exactly these. */
  readonly data?: Uint8Array;
}

export interface JobInput {
  readonly fifo: boolean;
  readonly group: string;
  /** undefined for a poison message. */
  readonly callId: string | undefined;
  /** The downstream refuses it for good. */
  readonly rejected: boolean;
  readonly body: string;
  readonly messageIds: string[];
}

export interface FailureRange {
  readonly shardId: string;
  readonly start: string;
  readonly end: string;
}

/** Kinesis sequence numbers are decimal strings of up to 128 bits: compared by length, then text. */
export function compareSequence(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

const inRange = (sequenceNumber: string, r: FailureRange) =>
  compareSequence(sequenceNumber, r.start) >= 0 && compareSequence(sequenceNumber, r.end) <= 0;

function addRange(ranges: Map<string, FailureRange[]>, range: FailureRange): void {
  const list = ranges.get(range.shardId) ?? [];
  list.push(range);
  ranges.set(range.shardId, list);
}

function append<T>(lists: Map<string, T[]>, key: string, value: T): void {
  const list = lists.get(key);
  if (list) list.push(value);
  else lists.set(key, [value]);
}

const TERMINAL_EVENTS = new Set(["tool_call.completed", "tool_call.failed"]);

/** A lifecycle event read from a record's bytes by the harness (JSON, not the product's decoder). */
export function putEventOf(data: Uint8Array | string): PutEvent | undefined {
  try {
    const text =
      typeof data === "string"
        ? Buffer.from(data, "base64").toString("utf8")
        : Buffer.from(data).toString("utf8");
    const e = JSON.parse(text) as Partial<PutEvent> & { error?: { retryable?: unknown } };
    if (typeof e.eventId !== "string" || typeof e.callId !== "string" || typeof e.type !== "string")
      return undefined;
    return {
      eventId: e.eventId,
      callId: e.callId,
      type: e.type,
      occurredAt: String(e.occurredAt),
      ...(typeof e.attempt === "number" ? { attempt: e.attempt } : {}),
      ...(typeof e.error?.retryable === "boolean" ? { retryable: e.error.retryable } : {}),
    };
  } catch {
    return undefined;
  }
}

export class Ledger {
  readonly stream: StreamInput[] = [];
  readonly jobs: JobInput[] = [];
  readonly effects = new CallEffects();
  /** How long each FIFO job's message was held hidden, from the SQS front's exchanges (the stall measure). */
  readonly holds = new FifoHolds();
  readonly #bySequence = new Map<string, number>();
  readonly #jobByCallId = new Map<string, number>();
  readonly #jobByMessageId = new Map<string, number>();
  readonly #quarantined = new Set<string>();
  /** Records whose quarantine object holds bytes that are not theirs (lost, whatever the key says). */
  readonly #quarantinedWrong = new Set<string>();
  /** Quarantine objects' bytes (base64) of records whose put was not answered yet: checked when it is. */
  readonly #quarantinedEarly = new Map<string, string>();
  /** First delivery of each stream record to the processor, by sequence number: when. */
  readonly #deliveredAt = new Map<string, number>();
  readonly #streamByShard = new Map<string, StreamInput[]>();
  /** Produced records out of the Kinesis mapping's hands: received by the processor, or given up (§1.6). */
  readonly #streamPassed = new Set<string>();
  readonly #jobDeliveredAt = new Map<string, number>();
  /** Failure records handed to dlq-redrive, per shard. */
  readonly #ranges = new Map<string, FailureRange[]>();
  readonly #rangeIds = new Set<string>();
  /** Failure records in the failure queue's DLQ (dlq-redrive failed them maxReceiveCount times, §2.3). */
  readonly #deadRanges = new Map<string, FailureRange[]>();
  readonly #deadRangeIds = new Set<string>();
  /**
   * Produced records in a failure record's range (given up by the mapping), and in a dead-lettered one:
   * filled when a range or a record arrives (ranges only grow), so a lookup costs nothing at 100,000 records.
   */
  readonly #givenUp = new Set<string>();
  readonly #inDeadRange = new Set<string>();
  /** Messages taken out of the DLQs, by messageId: the body and attributes a redrive needs. */
  readonly dead = new Map<string, DrainedMessage & { readonly queue: "tool" | "fifo" | "stream" }>();
  readonly #deadJobs = new Set<number>();
  /** DLQ messages per job (index): a job dead-lettered again after a redrive has one more. */
  readonly #deadCount = new Map<number, number>();
  /** Sequence numbers the replay wrote, and how many of those the processor's mapping gave up again. */
  readonly #replayed = new Set<string>();
  #givenUpAgain = 0;
  /** Terminal lifecycle events the processor was handed, per call: the outcomes the workers published. */
  readonly #published = new Map<string, Set<string>>();
  /** What the harness did to each job's requests, or saw happen to its invocations. */
  readonly #incidents = new Map<string, JobIncident[]>();
  /** The worker invocations each job was handed (a fault explains a second run only inside the one that ran it). */
  readonly #invocations = new Map<string, InvocationWindow[]>();
  #faultsByPhase = { main: 0, replay: 0 };
  #streamSettled = 0;
  #jobsSettled = 0;
  phase: Phase = Phase.Main;

  recordStream(input: StreamInput): void {
    this.#bySequence.set(input.sequenceNumber, this.stream.length);
    this.stream.push(input);
    const early = this.#quarantinedEarly.get(input.sequenceNumber);
    if (early !== undefined) {
      this.#quarantinedEarly.delete(input.sequenceNumber);
      if (!this.#ownBytes(input, early)) {
        this.#quarantined.delete(input.sequenceNumber);
        this.#quarantinedWrong.add(input.sequenceNumber);
      }
    }
    const shard = this.#streamByShard.get(input.shardId) ?? [];
    shard.push(input);
    this.#streamByShard.set(input.shardId, shard);
    // The processor can receive a record, or the mapping give it up, before its put is answered here (a
    // chunk's put is answered once all its records are written): a record already in a failure record's
    // range is given up, as `failureRange` marks the records it finds, or the verdict judges its replay's
    // late effect as an order violation and a key stall.
    const givenUp = this.#inRanges(input.shardId, input.sequenceNumber, this.#ranges);
    if (givenUp) this.#givenUp.add(input.sequenceNumber);
    if (givenUp || this.#deliveredAt.has(input.sequenceNumber)) this.#streamPassed.add(input.sequenceNumber);
  }

  recordJob(
    fifo: boolean,
    group: string,
    job: { readonly callId: string; readonly rejected: boolean } | undefined,
    body: string,
    messageId: string,
  ): void {
    const known = job === undefined ? undefined : this.#jobByCallId.get(job.callId);
    if (known !== undefined) {
      // A producer's second send of the same job: the same input, one more message.
      this.jobs[known]?.messageIds.push(messageId);
      this.#jobByMessageId.set(messageId, known);
      return;
    }
    const taken = this.#jobByMessageId.get(messageId);
    if (taken !== undefined && messageId !== "")
      // SQS answered a send with the id of an earlier job's message: it deduplicated this one (§3), so
      // it does not exist, and waiting for it would look like a loss. The producer's ids are wrong.
      throw new Error(
        `job message ${messageId} was answered for two jobs (${taken} and ${this.jobs.length}): SQS deduplicated the second send (docs/aws-semantics.md §3); each job needs a deduplication id of its own`,
      );
    const index = this.jobs.length;
    this.jobs.push({
      fifo,
      group,
      callId: job?.callId,
      rejected: job?.rejected ?? false,
      body,
      messageIds: [messageId],
    });
    if (job !== undefined) this.#jobByCallId.set(job.callId, index);
    this.#jobByMessageId.set(messageId, index);
  }

  get producedStream(): number {
    return this.stream.length;
  }

  get deliveredStream(): number {
    return this.#deliveredAt.size;
  }

  /**
   * Produced stream records still ahead of the Kinesis mapping: neither received by the processor nor
   * given up. The producer paces on this, not on deliveries: a record older than
   * MaximumRecordAgeInSeconds leaves its batch before any invocation and goes to the on-failure
   * destination (§1.3, §1.6, §9.1 item 4), so it is never delivered.
   */
  get streamBacklog(): number {
    return this.stream.length - this.#streamPassed.size;
  }

  callWritten(write: CallWrite, at: number): void {
    this.effects.record(write, at);
  }

  /**
   * A quarantine object stored under a record's sequence number, with the bytes it holds (base64, from the
   * object the door saw written): it accounts for a produced record only if those are the record's bytes.
   */
  quarantined(sequenceNumber: string, data?: string): void {
    if (this.#quarantinedWrong.has(sequenceNumber)) return;
    const index = this.#bySequence.get(sequenceNumber);
    if (data !== undefined && index === undefined && !this.#replayed.has(sequenceNumber))
      this.#quarantinedEarly.set(sequenceNumber, data);
    const input = index === undefined ? undefined : this.stream[index];
    if (input !== undefined && data !== undefined && !this.#quarantined.has(sequenceNumber)) {
      if (!this.#ownBytes(input, data)) {
        this.#quarantinedWrong.add(sequenceNumber);
        return;
      }
    }
    if (this.#replayed.has(sequenceNumber) && !this.#quarantined.has(sequenceNumber)) this.#givenUpAgain += 1;
    this.#quarantined.add(sequenceNumber);
  }

  #ownBytes(input: StreamInput, data: string): boolean {
    return input.data === undefined || Buffer.from(data, "base64").equals(input.data);
  }

  /** Replayed records that were given up again and quarantined again (under their replay's sequence number). */
  get givenUpAgain(): number {
    return this.#givenUpAgain;
  }

  /** A fault a door injected: an incident of every job its request named. */
  fault(touch: FaultTouch): void {
    this.#faultsByPhase[this.phase] += 1;
    for (const callId of touch.callIds)
      this.incident(callId, { at: touch.at, cause: RunCause.FaultAfterRun });
  }

  /**
   * A failure of an emulator behind a door (not injected): an incident of every job its request named, as
   * an injected fault is, so that a rerun it caused has its cause; not a fault of the plan's phases.
   */
  emulatorError(touch: EmulatorErrorTouch): void {
    for (const callId of touch.callIds)
      this.incident(callId, { at: touch.at, cause: RunCause.EmulatorFailed });
  }

  /** Faults injected (doors and invocations) in each phase: the replay's must not be zero. */
  get faultsByPhase(): Readonly<{ main: number; replay: number }> {
    return this.#faultsByPhase;
  }

  invocationFault(): void {
    this.#faultsByPhase[this.phase] += 1;
  }

  incident(callId: string, incident: JobIncident): void {
    append(this.#incidents, callId, incident);
  }

  incidents(callId: string): readonly JobIncident[] {
    return this.#incidents.get(callId) ?? [];
  }

  /** A worker invocation that was handed the job, from its start to its end. */
  invoked(callId: string, window: InvocationWindow): void {
    append(this.#invocations, callId, window);
  }

  invocations(callId: string): readonly InvocationWindow[] {
    return this.#invocations.get(callId) ?? [];
  }

  /** Replayed records not yet received by the processor, by their new sequence numbers. */
  readonly #replayPending = new Set<string>();
  /**
   * First deliveries of records not produced by the run (not in `stream` when delivered): the replay's,
   * whose puts may be answered after the processor has them, and produced ones whose put was not answered
   * yet. The event each carries, for the key stall of the replayed ones (`replayDeliveries`).
   */
  readonly #deliveredUnknown = new Map<string, string>();

  /** A record the replay put back into the stream: the run is judged only once the processor has read it. */
  replayWritten(sequenceNumber: string): void {
    this.#replayed.add(sequenceNumber);
    if (!this.#deliveredAt.has(sequenceNumber)) this.#replayPending.add(sequenceNumber);
  }

  get replayPending(): number {
    return this.#replayPending.size;
  }

  /**
   * A batch the processor received: the first delivery of each record, and the outcomes the workers
   * published (terminal events read from the records' bytes).
   */
  processorDelivered(
    records: readonly { sequenceNumber: string; data: string | undefined }[],
    at: number,
  ): void {
    for (const { sequenceNumber, data } of records) {
      this.#replayPending.delete(sequenceNumber);
      if (this.#deliveredAt.has(sequenceNumber)) continue;
      if (this.#bySequence.has(sequenceNumber)) this.#streamPassed.add(sequenceNumber);
      this.#deliveredAt.set(sequenceNumber, at);
      const event = data === undefined ? undefined : putEventOf(data);
      if (event && !this.#bySequence.has(sequenceNumber))
        this.#deliveredUnknown.set(sequenceNumber, event.eventId);
      if (event && TERMINAL_EVENTS.has(event.type) && event.retryable !== true) {
        const types = this.#published.get(event.callId) ?? new Set<string>();
        types.add(event.type);
        this.#published.set(event.callId, types);
      }
    }
  }

  /**
   * Each replayed record the processor received, with its event and its first delivery, unless the mapping
   * gave it up again (quarantined again, or in a failure record's range): a record given up is bounded by
   * the mapping's retries, as a produced one is, and a stuck event's writes are refused until its round.
   */
  replayDeliveries(): { sequenceNumber: string; eventId: string; at: number }[] {
    const out: { sequenceNumber: string; eventId: string; at: number }[] = [];
    for (const [sequenceNumber, eventId] of this.#deliveredUnknown) {
      const at = this.#deliveredAt.get(sequenceNumber);
      if (!this.#replayed.has(sequenceNumber) || at === undefined) continue;
      if (this.#quarantined.has(sequenceNumber)) continue;
      // Kinesis sequence numbers name their shard; the replay's answer is not kept, so every shard is asked.
      if ([...this.#ranges.values()].some((ranges) => ranges.some((r) => inRange(sequenceNumber, r))))
        continue;
      out.push({ sequenceNumber, eventId, at });
    }
    return out;
  }

  /** The terminal event types published for a call (seen handed to the processor). */
  published(callId: string): ReadonlySet<string> {
    return this.#published.get(callId) ?? new Set();
  }

  fifoDelivered(callIds: readonly string[], at: number): void {
    for (const callId of callIds) if (!this.#jobDeliveredAt.has(callId)) this.#jobDeliveredAt.set(callId, at);
  }

  jobDeliveredAt(callId: string): number | undefined {
    return this.#jobDeliveredAt.get(callId);
  }

  deliveredAt(sequenceNumber: string): number | undefined {
    return this.#deliveredAt.get(sequenceNumber);
  }

  /**
   * A failure record of the Kinesis mapping (§1.6) handed to dlq-redrive: its records have left the
   * mapping, but are accounted for only once dlq-redrive has stored them in the quarantine or the failure
   * record is in the failure queue's DLQ.
   */
  failureRange(id: string, range: FailureRange): void {
    if (this.#rangeIds.has(id)) return;
    this.#rangeIds.add(id);
    addRange(this.#ranges, range);
    for (const input of this.#streamByShard.get(range.shardId) ?? [])
      if (inRange(input.sequenceNumber, range)) {
        this.#streamPassed.add(input.sequenceNumber);
        this.#givenUp.add(input.sequenceNumber);
      }
  }

  /** Failure records found in the failure queue's DLQ: dlq-redrive's mapping will never delete them. */
  get deadLetteredFailureRecords(): number {
    return this.#deadRangeIds.size;
  }

  /** A failure record found in the failure queue's DLQ (SQS moved it there after maxReceiveCount, §2.3). */
  failureRecordDeadLettered(id: string, range: FailureRange): void {
    this.failureRange(id, range);
    if (this.#deadRangeIds.has(id)) return;
    this.#deadRangeIds.add(id);
    addRange(this.#deadRanges, range);
    for (const input of this.#streamByShard.get(range.shardId) ?? [])
      if (inRange(input.sequenceNumber, range)) this.#inDeadRange.add(input.sequenceNumber);
  }

  deadLettered(queue: "tool" | "fifo" | "stream", message: DrainedMessage): void {
    this.dead.set(message.id, { ...message, queue });
    const index =
      this.#jobByMessageId.get(message.id) ??
      this.#jobByMessageId.get(message.attributes["pipeline.source.messageId"] ?? "");
    if (index !== undefined) {
      this.#deadJobs.add(index);
      this.#deadCount.set(index, (this.#deadCount.get(index) ?? 0) + 1);
    }
  }

  /** How many of a job's messages reached a DLQ. */
  deadMessagesOf(callId: string): number {
    const index = this.#jobByCallId.get(callId);
    return index === undefined ? 0 : (this.#deadCount.get(index) ?? 0);
  }

  #inRanges(shardId: string, sequenceNumber: string, ranges: Map<string, FailureRange[]>): boolean {
    return (ranges.get(shardId) ?? []).some((r) => inRange(sequenceNumber, r));
  }

  /** Whether the Kinesis mapping gave the record up (it is in a failure record's range). */
  givenUp(input: StreamInput): boolean {
    return this.#givenUp.has(input.sequenceNumber);
  }

  isQuarantined(sequenceNumber: string): boolean {
    return this.#quarantined.has(sequenceNumber);
  }

  jobDead(index: number): boolean {
    return this.#deadJobs.has(index);
  }

  #applied(input: StreamInput): boolean {
    return input.event !== undefined && this.effects.applied(input.event.eventId);
  }

  /**
   * Valid records given up by the mapping, not applied and not in the quarantine: the replay reads only
   * the quarantine, so it must wait for these (dlq-redrive storing them, after a redrive of the failure
   * queue's DLQ for those whose failure record is there).
   */
  givenUpNotQuarantined(limit = Number.POSITIVE_INFINITY): Tally {
    const out = new Tally(limit);
    for (const s of this.stream) {
      if (s.event === undefined || this.#applied(s)) continue;
      if (this.#quarantined.has(s.sequenceNumber) || !this.givenUp(s)) continue;
      out.add(`${s.kind} record ${s.shardId}/${s.sequenceNumber} (${s.event.eventId})`);
    }
    return out;
  }

  /** Inputs not yet applied, quarantined or dead-lettered, each named (the first `limit`). */
  unsettled(limit = Number.POSITIVE_INFINITY): Tally {
    const out = new Tally(limit);
    // What is accounted for stays so (effects, quarantine objects, ranges and DLQ contents only grow), so
    // each input is judged until it is settled, then skipped: the loop that polls this stays linear.
    for (let i = this.#streamSettled; i < this.stream.length; i++) {
      const s = this.stream[i] as StreamInput;
      if (
        this.#applied(s) ||
        this.#quarantined.has(s.sequenceNumber) ||
        this.#inDeadRange.has(s.sequenceNumber)
      ) {
        if (i === this.#streamSettled) this.#streamSettled += 1;
        continue;
      }
      const wrong = this.#quarantinedWrong.has(s.sequenceNumber)
        ? " (quarantined with bytes that are not the record's)"
        : "";
      out.add(
        `${s.kind} record ${s.shardId}/${s.sequenceNumber}${s.event ? ` (${s.event.eventId})` : ""}${wrong}`,
      );
    }
    for (let index = this.#jobsSettled; index < this.jobs.length; index++) {
      const j = this.jobs[index] as JobInput;
      const done = j.callId !== undefined && this.effects.finished(j.callId);
      if (done || this.jobDead(index)) {
        if (index === this.#jobsSettled) this.#jobsSettled += 1;
        continue;
      }
      out.add(`${j.fifo ? "fifo " : ""}${j.callId ? `job ${j.callId}` : `poison job ${j.messageIds[0]}`}`);
    }
    return out;
  }

  /** Valid inputs whose effect has not happened (after the replay, every one must have). */
  unapplied(limit = Number.POSITIVE_INFINITY): Tally {
    const out = new Tally(limit);
    const seen = new Set<string>();
    for (const s of this.stream) {
      if (s.event === undefined || seen.has(s.event.eventId)) continue;
      seen.add(s.event.eventId);
      if (!this.#applied(s)) out.add(`event ${s.event.eventId}`);
    }
    for (const j of this.jobs)
      if (j.callId !== undefined && !this.effects.finished(j.callId)) out.add(`job ${j.callId}`);
    return out;
  }

  /**
   * Valid jobs found in a DLQ, to send back to their queue (a redrive makes new messages, §4), finished or
   * not, as the operator's `recover -- redrive` moves every message: a job can reach the DLQ with its
   * outcome stored and not published (its last receive stored it, then its publish was cut off), and only
   * its redelivery publishes that outcome.
   */
  deadValidJobs(): { fifo: boolean; group: string; callId: string; body: string }[] {
    const out: { fifo: boolean; group: string; callId: string; body: string }[] = [];
    this.jobs.forEach((j, index) => {
      if (j.callId !== undefined && this.jobDead(index))
        out.push({ fifo: j.fifo, group: j.group, callId: j.callId, body: j.body });
    });
    return out;
  }

  counts() {
    const streamKinds = { event: 0, stuck: 0, duplicate: 0, poison: 0 };
    for (const s of this.stream) streamKinds[s.kind] += 1;
    const calls = new Set(this.stream.flatMap((s) => (s.event ? [s.event.callId] : [])));
    return {
      streamRecords: this.stream.length,
      streamKinds,
      calls: calls.size,
      jobs: this.jobs.length,
      jobMessages: this.jobs.reduce((n, j) => n + j.messageIds.length, 0),
      poisonJobs: this.jobs.filter((j) => j.callId === undefined).length,
      callsWritten: this.effects.calls,
      quarantineObjects: this.#quarantined.size,
      failureRanges: this.#rangeIds.size,
      deadLettered: this.dead.size,
    };
  }
}
