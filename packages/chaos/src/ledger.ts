/**
 * The ledger: every input the run produced, what became of it, and the verdicts. Pure bookkeeping (no
 * I/O): the run feeds it what the doors, the mappings' events and the DLQ drains saw, in O(1) per
 * observation, and judges once at the end in O(inputs), so 100,000 events cost memory, not time.
 *
 * What it relies on of AWS (docs/aws-semantics.md):
 * - every mapping is at least once (§1.3, §2.1, §3): a record or message may be delivered again, so a
 *   second delivery must add no effect; the effects are counted where they happen (the doors);
 * - Kinesis delivers the records of one partition key in order (§1.2), a parent shard before its
 *   children after a reshard (§9.1 item 1): checked on deliveries, since the processor's effect is a
 *   join (its state is the same whatever the order, /work DESIGN "Idempotency"), so its order cannot
 *   show in the table;
 * - an SQS FIFO queue hands a group's messages over in order (§3), and the fifo-worker runs them in
 *   that order: its effects (a tool run, completed) depend on order and are checked as they happened;
 *   a message that went to a DLQ leaves the order (§3, "A DLQ breaks the exact order") and is exempt;
 * - a standard queue has no order (§2.1): not checked.
 */
import type { DrainedMessage } from "@mcp-pipeline/local-pipeline";
import type { Effect } from "./doors.js";

export const Phase = { Main: "main", Replay: "replay" } as const;
export type Phase = (typeof Phase)[keyof typeof Phase];

/** One stream record produced: its place in the stream and what it carries. */
interface StreamInput {
  readonly kind: "event" | "stuck" | "duplicate" | "poison";
  readonly key: string;
  readonly callId: string | undefined;
  readonly shardId: string;
  readonly sequenceNumber: string;
}

interface JobInput {
  readonly fifo: boolean;
  readonly group: string;
  /** undefined for a poison message. */
  readonly callId: string | undefined;
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

export interface Check {
  readonly name: string;
  readonly pass: boolean;
  readonly detail: string;
}

export interface StallBounds {
  readonly partitionKeyMs: number;
  readonly groupMs: number;
}

export interface FinalState {
  /** callIds whose tool-calls item has requestedAt (the processor applied the event). */
  readonly requested: ReadonlySet<string>;
  /** callIds whose tool-calls item is completed or failed (a worker finished the job). */
  readonly finished: ReadonlySet<string>;
  /** Sequence numbers of the records in the quarantine bucket. */
  readonly quarantined: ReadonlySet<string>;
}

function addRange(ranges: Map<string, FailureRange[]>, range: FailureRange): void {
  const list = ranges.get(range.shardId) ?? [];
  list.push(range);
  ranges.set(range.shardId, list);
}

export class Ledger {
  readonly #stream: StreamInput[] = [];
  readonly #bySequence = new Map<string, number>();
  readonly #jobs: JobInput[] = [];
  readonly #jobByCallId = new Map<string, number>();
  readonly #jobByMessageId = new Map<string, number>();
  /** Effects per callId, counted at the doors. */
  readonly #callEffects = new Map<string, number>();
  readonly #jobEffects = new Map<string, number>();
  /** When and in which order (a global count) each callId's effect first happened, in the main phase. */
  readonly #jobEffectOrdinal = new Map<string, number>();
  readonly #effectAt = new Map<string, number>();
  readonly #quarantined = new Set<string>();
  /** First delivery of each stream record to the processor: ordinal and time. */
  readonly #deliveredOrdinal = new Map<string, number>();
  readonly #deliveredAt = new Map<string, number>();
  /** Produced stream records per shard, to find the ones a failure range names. */
  readonly #streamByShard = new Map<string, StreamInput[]>();
  /**
   * Produced stream records out of the Kinesis mapping's hands, by sequence number: received by the
   * processor, or given up and named in a failure record (§1.6).
   */
  readonly #streamPassed = new Set<string>();
  readonly #jobDeliveredAt = new Map<string, number>();
  /** Failure records handed to dlq-redrive, per shard: their records are out of the mapping's hands. */
  readonly #ranges = new Map<string, FailureRange[]>();
  readonly #rangeIds = new Set<string>();
  /**
   * Failure records in the failure queue's DLQ, per shard: dlq-redrive failed them maxReceiveCount times
   * (§2.3), so their records are not in the quarantine but in a DLQ, waiting for a redrive.
   */
  readonly #deadRanges = new Map<string, FailureRange[]>();
  readonly #deadRangeIds = new Set<string>();
  /** Messages taken out of the DLQs, by messageId: the body and attributes a replay needs. */
  readonly dead = new Map<string, DrainedMessage & { readonly queue: "tool" | "fifo" | "stream" }>();
  /** Jobs (indexes) with a message in a DLQ. */
  readonly #deadJobs = new Set<number>();
  #ordinal = 0;
  /** Inputs before these indexes are all settled. */
  #streamSettled = 0;
  #jobsSettled = 0;
  phase: Phase = Phase.Main;

  recordStream(input: StreamInput): void {
    this.#bySequence.set(input.sequenceNumber, this.#stream.length);
    this.#stream.push(input);
    const shard = this.#streamByShard.get(input.shardId) ?? [];
    shard.push(input);
    this.#streamByShard.set(input.shardId, shard);
    // The processor can receive a record, or the mapping give it up, before its put is answered here.
    if (this.#deliveredOrdinal.has(input.sequenceNumber) || this.#inFailureRange(input))
      this.#streamPassed.add(input.sequenceNumber);
  }

  recordJob(fifo: boolean, group: string, callId: string | undefined, body: string, messageId: string): void {
    const known = callId === undefined ? undefined : this.#jobByCallId.get(callId);
    if (known !== undefined) {
      // A producer's second send of the same job: the same input, one more message.
      this.#jobs[known]?.messageIds.push(messageId);
      this.#jobByMessageId.set(messageId, known);
      return;
    }
    const taken = this.#jobByMessageId.get(messageId);
    if (taken !== undefined && messageId !== "")
      // SQS answered a send with the id of an earlier job's message: it deduplicated this one (§3), so
      // it does not exist, and waiting for it would look like a loss. The producer's ids are wrong.
      throw new Error(
        `job message ${messageId} was answered for two jobs (${taken} and ${this.#jobs.length}): SQS deduplicated the second send (docs/aws-semantics.md §3); each job needs a deduplication id of its own`,
      );
    const index = this.#jobs.length;
    this.#jobs.push({ fifo, group, callId, body, messageIds: [messageId] });
    if (callId !== undefined) this.#jobByCallId.set(callId, index);
    this.#jobByMessageId.set(messageId, index);
  }

  get producedStream(): number {
    return this.#stream.length;
  }

  get deliveredStream(): number {
    return this.#deliveredOrdinal.size;
  }

  /**
   * Produced stream records still ahead of the Kinesis mapping: neither received by the processor nor
   * given up. The producer paces on this, not on deliveries: a record older than
   * MaximumRecordAgeInSeconds leaves its batch before any invocation and goes to the on-failure
   * destination (§1.3, §1.6, §9.1 item 4), so it is never delivered, and a producer waiting for its
   * delivery waits for good.
   */
  get streamBacklog(): number {
    return this.#stream.length - this.#streamPassed.size;
  }

  effect(effect: Effect, at: number): void {
    if (effect.kind === "quarantined") {
      this.#quarantined.add(effect.sequenceNumber);
      return;
    }
    const counts = effect.kind === "call-state" ? this.#callEffects : this.#jobEffects;
    counts.set(effect.callId, (counts.get(effect.callId) ?? 0) + 1);
    if (!this.#effectAt.has(effect.callId)) this.#effectAt.set(effect.callId, at);
    if (
      effect.kind === "job-completed" &&
      this.phase === Phase.Main &&
      !this.#jobEffectOrdinal.has(effect.callId)
    )
      this.#jobEffectOrdinal.set(effect.callId, this.#ordinal++);
  }

  /** Replayed records not yet received by the processor, by their new sequence numbers. */
  readonly #replayPending = new Set<string>();

  /**
   * A record the replay put back into the stream: the run is judged only once the processor has read it.
   * The replay reports it after marking its quarantine objects, and the processor, polling meanwhile, has
   * often received it already: a sequence number it was handed before is not pending.
   */
  replayWritten(sequenceNumber: string): void {
    if (!this.#deliveredOrdinal.has(sequenceNumber)) this.#replayPending.add(sequenceNumber);
  }

  /** Replayed records the processor has not received yet. */
  get replayPending(): number {
    return this.#replayPending.size;
  }

  /** A batch the processor received: the first delivery of each record fixes its delivery order. */
  processorDelivered(sequenceNumbers: readonly string[], at: number): void {
    for (const sequence of sequenceNumbers) {
      this.#replayPending.delete(sequence);
      if (this.#deliveredOrdinal.has(sequence)) continue;
      if (this.#bySequence.has(sequence)) this.#streamPassed.add(sequence);
      this.#deliveredOrdinal.set(sequence, this.#ordinal++);
      this.#deliveredAt.set(sequence, at);
    }
  }

  fifoDelivered(callIds: readonly string[], at: number): void {
    for (const callId of callIds) if (!this.#jobDeliveredAt.has(callId)) this.#jobDeliveredAt.set(callId, at);
  }

  /**
   * A failure record of the Kinesis mapping (its on-failure destination, §1.6) handed to dlq-redrive, by
   * its messageId: its records have left the mapping, but are accounted for only once dlq-redrive has
   * stored them in the quarantine or the failure record is in the failure queue's DLQ.
   */
  failureRange(id: string, range: FailureRange): void {
    if (this.#rangeIds.has(id)) return;
    this.#rangeIds.add(id);
    addRange(this.#ranges, range);
    for (const input of this.#streamByShard.get(range.shardId) ?? [])
      if (
        compareSequence(input.sequenceNumber, range.start) >= 0 &&
        compareSequence(input.sequenceNumber, range.end) <= 0
      )
        this.#streamPassed.add(input.sequenceNumber);
  }

  /** A failure record found in the failure queue's DLQ (SQS moved it there after maxReceiveCount, §2.3). */
  failureRecordDeadLettered(id: string, range: FailureRange): void {
    this.failureRange(id, range);
    if (this.#deadRangeIds.has(id)) return;
    this.#deadRangeIds.add(id);
    addRange(this.#deadRanges, range);
  }

  deadLettered(queue: "tool" | "fifo" | "stream", message: DrainedMessage): void {
    this.dead.set(message.id, { ...message, queue });
    const index =
      this.#jobByMessageId.get(message.id) ??
      this.#jobByMessageId.get(message.attributes["pipeline.source.messageId"] ?? "");
    if (index !== undefined) this.#deadJobs.add(index);
  }

  #inFailureRange(input: StreamInput, ranges = this.#ranges): boolean {
    return (ranges.get(input.shardId) ?? []).some(
      (r) =>
        compareSequence(input.sequenceNumber, r.start) >= 0 &&
        compareSequence(input.sequenceNumber, r.end) <= 0,
    );
  }

  /**
   * Valid records given up by the mapping, not applied and not in the quarantine: the replay reads only
   * the quarantine, so it must wait for these (dlq-redrive storing them, after a redrive of the failure
   * queue's DLQ for those whose failure record is there).
   */
  givenUpNotQuarantined(limit = Number.POSITIVE_INFINITY): { count: number; names: string[] } {
    let count = 0;
    const names: string[] = [];
    for (const s of this.#stream) {
      if (s.callId === undefined || s.kind === "poison" || this.#callEffects.has(s.callId)) continue;
      if (this.#quarantined.has(s.sequenceNumber) || !this.#inFailureRange(s)) continue;
      count += 1;
      if (names.length < limit) names.push(`${s.kind} record ${s.shardId}/${s.sequenceNumber} (${s.callId})`);
    }
    return { count, names };
  }

  #jobDead(index: number): boolean {
    return this.#deadJobs.has(index);
  }

  /** Inputs not yet applied, quarantined or dead-lettered, each named (the first `limit`). */
  unsettled(limit = Number.POSITIVE_INFINITY): { count: number; names: string[] } {
    let count = 0;
    const names: string[] = [];
    const add = (name: string) => {
      count += 1;
      if (names.length < limit) names.push(name);
    };
    // What is accounted for stays so (effects, quarantine objects, ranges and DLQ contents only grow), so
    // each input is judged until it is settled, then skipped: the loop that polls this stays linear.
    for (let i = this.#streamSettled; i < this.#stream.length; i++) {
      const s = this.#stream[i] as StreamInput;
      const applied = s.callId !== undefined && s.kind !== "poison" && this.#callEffects.has(s.callId);
      if (applied || this.#quarantined.has(s.sequenceNumber) || this.#inFailureRange(s, this.#deadRanges)) {
        if (i === this.#streamSettled) this.#streamSettled += 1;
        continue;
      }
      add(`${s.kind} record ${s.shardId}/${s.sequenceNumber}${s.callId ? ` (${s.callId})` : ""}`);
    }
    for (let index = this.#jobsSettled; index < this.#jobs.length; index++) {
      const j = this.#jobs[index] as JobInput;
      const done = j.callId !== undefined && this.#jobEffects.has(j.callId);
      if (done || this.#jobDead(index)) {
        if (index === this.#jobsSettled) this.#jobsSettled += 1;
        continue;
      }
      add(`${j.fifo ? "fifo " : ""}${j.callId ? `job ${j.callId}` : `poison job ${j.messageIds[0]}`}`);
    }
    return { count, names };
  }

  /** Valid inputs whose effect has not happened (after the replay, every one must have). */
  unapplied(limit = Number.POSITIVE_INFINITY): { count: number; names: string[] } {
    let count = 0;
    const names: string[] = [];
    const seen = new Set<string>();
    for (const s of this.#stream) {
      if (s.callId === undefined || s.kind === "poison" || seen.has(s.callId)) continue;
      seen.add(s.callId);
      if (!this.#callEffects.has(s.callId)) {
        count += 1;
        if (names.length < limit) names.push(`event ${s.callId}`);
      }
    }
    for (const j of this.#jobs) {
      if (j.callId !== undefined && !this.#jobEffects.has(j.callId)) {
        count += 1;
        if (names.length < limit) names.push(`job ${j.callId}`);
      }
    }
    return { count, names };
  }

  /** Valid jobs found in a DLQ, to send back to their queue (a redrive makes new messages, §4). */
  deadValidJobs(): { fifo: boolean; group: string; callId: string; body: string }[] {
    const out: { fifo: boolean; group: string; callId: string; body: string }[] = [];
    this.#jobs.forEach((j, index) => {
      if (j.callId !== undefined && !this.#jobEffects.has(j.callId) && this.#jobDead(index))
        out.push({ fifo: j.fifo, group: j.group, callId: j.callId, body: j.body });
    });
    return out;
  }

  /** Records of a key delivered before an earlier record of the same key (produced order = put order). */
  #keyOrderViolations(): { count: number; example: string } {
    const last = new Map<string, number>();
    let count = 0;
    let example = "";
    for (const s of this.#stream) {
      const ordinal = this.#deliveredOrdinal.get(s.sequenceNumber);
      if (ordinal === undefined) continue;
      const before = last.get(s.key) ?? -1;
      if (ordinal < before) {
        count += 1;
        example ||= `${s.key}: ${s.sequenceNumber} delivered before an earlier record of its key`;
      }
      last.set(s.key, Math.max(before, ordinal));
    }
    return { count, example };
  }

  #groupOrderViolations(): { count: number; example: string } {
    const last = new Map<string, number>();
    let count = 0;
    let example = "";
    this.#jobs.forEach((j, index) => {
      if (!j.fifo || j.callId === undefined || this.#jobDead(index)) return;
      const ordinal = this.#jobEffectOrdinal.get(j.callId);
      if (ordinal === undefined) return;
      const before = last.get(j.group) ?? -1;
      if (ordinal < before) {
        count += 1;
        example ||= `${j.group}: ${j.callId} ran before an earlier job of its group`;
      }
      last.set(j.group, Math.max(before, ordinal));
    });
    return { count, example };
  }

  /**
   * The longest time a partition key or FIFO group held a delivered input without applying it: from an
   * input's first delivery to its effect. Waiting in a backlog is not a stall (nothing was delivered);
   * retries of a failing batch are (its records are delivered and wait). Inputs that left for the
   * failure destination or a DLQ are measured by the run's bound on retries, not here.
   */
  stalls(): { partitionKey: { ms: number; key: string }; group: { ms: number; key: string } } {
    const partitionKey = { ms: 0, key: "" };
    for (const s of this.#stream) {
      if (s.kind !== "event" || s.callId === undefined) continue;
      const delivered = this.#deliveredAt.get(s.sequenceNumber);
      const applied = this.#effectAt.get(s.callId);
      if (delivered === undefined || applied === undefined || this.#inFailureRange(s)) continue;
      if (applied - delivered > partitionKey.ms)
        Object.assign(partitionKey, { ms: applied - delivered, key: s.key });
    }
    const group = { ms: 0, key: "" };
    this.#jobs.forEach((j, index) => {
      if (!j.fifo || j.callId === undefined || this.#jobDead(index)) return;
      const delivered = this.#jobDeliveredAt.get(j.callId);
      const applied = this.#effectAt.get(j.callId);
      if (delivered === undefined || applied === undefined) return;
      if (applied - delivered > group.ms) Object.assign(group, { ms: applied - delivered, key: j.group });
    });
    return { partitionKey, group };
  }

  counts() {
    // The table also holds the jobs' calls, which their lifecycle events write several times by design
    // (requested, started, completed): only the stream's own events, one per call, are counted here.
    let duplicateCallEffects = 0;
    let callsApplied = 0;
    const eventCalls = new Set<string>();
    for (const s of this.#stream) if (s.callId !== undefined && s.kind !== "poison") eventCalls.add(s.callId);
    for (const callId of eventCalls) {
      const n = this.#callEffects.get(callId) ?? 0;
      if (n > 0) callsApplied += 1;
      if (n > 1) duplicateCallEffects += n - 1;
    }
    let duplicateJobEffects = 0;
    for (const n of this.#jobEffects.values()) if (n > 1) duplicateJobEffects += n - 1;
    const streamKinds = { event: 0, stuck: 0, duplicate: 0, poison: 0 };
    for (const s of this.#stream) streamKinds[s.kind] += 1;
    return {
      streamRecords: this.#stream.length,
      streamKinds,
      jobs: this.#jobs.length,
      jobMessages: this.#jobs.reduce((n, j) => n + j.messageIds.length, 0),
      poisonJobs: this.#jobs.filter((j) => j.callId === undefined).length,
      callsApplied,
      jobsCompleted: this.#jobEffects.size,
      duplicateEffects: duplicateCallEffects + duplicateJobEffects,
      quarantineObjects: this.#quarantined.size,
      failureRanges: this.#rangeIds.size,
      deadLettered: this.dead.size,
    };
  }

  /**
   * The verdicts. `timedOut` runs judge loss as "still in flight", never as lost; the final state (a
   * scan of the table and of the quarantine, read after the run) must agree with the effects counted.
   */
  checks(final: FinalState, bounds: StallBounds, timedOut: boolean): Check[] {
    const counts = this.counts();
    const unsettled = this.unsettled(5);
    const unapplied = this.unapplied(5);
    const keyOrder = this.#keyOrderViolations();
    const groupOrder = this.#groupOrderViolations();
    const stalls = this.stalls();
    const stateMissing: string[] = [];
    for (const s of this.#stream) {
      if (
        s.kind === "poison" &&
        this.#quarantined.has(s.sequenceNumber) &&
        !final.quarantined.has(s.sequenceNumber)
      )
        stateMissing.push(`poison record ${s.sequenceNumber} written to the quarantine but not there`);
      if (
        s.callId !== undefined &&
        s.kind !== "poison" &&
        this.#callEffects.has(s.callId) &&
        !final.requested.has(s.callId)
      )
        stateMissing.push(`call ${s.callId} written but not in the table`);
    }
    for (const j of this.#jobs)
      if (j.callId !== undefined && this.#jobEffects.has(j.callId) && !final.finished.has(j.callId))
        stateMissing.push(`job ${j.callId} completed but its call is not finished in the table`);
    const lost = timedOut ? 0 : unapplied.count;
    const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    return [
      {
        name: "every input accounted for (applied, quarantined or in a DLQ)",
        pass: timedOut || unsettled.count === 0,
        detail: timedOut
          ? `timed out: ${unsettled.count} still in flight${unsettled.names.length ? ` (${unsettled.names.join("; ")})` : ""}`
          : `${counts.streamRecords} records, ${counts.jobMessages} messages; unaccounted ${unsettled.count}${unsettled.names.length ? `: ${unsettled.names.join("; ")}` : ""}`,
      },
      {
        name: "after replay, every valid input applied (lost = 0)",
        pass: timedOut || unapplied.count === 0,
        detail: timedOut
          ? `timed out: ${unapplied.count} not applied yet, in flight, not lost${unapplied.names.length ? ` (${unapplied.names.join("; ")})` : ""}`
          : `lost ${lost}${unapplied.names.length ? `: ${unapplied.names.join("; ")}` : ""}`,
      },
      {
        name: "each effect once (duplicate effects = 0)",
        pass: counts.duplicateEffects === 0,
        detail: `${counts.callsApplied} calls written, ${counts.jobsCompleted} jobs completed; duplicate effects ${counts.duplicateEffects}`,
      },
      {
        name: "final state agrees (table and quarantine)",
        pass: stateMissing.length === 0,
        detail:
          stateMissing.length === 0
            ? "every effect is in the table; every quarantined record in the bucket"
            : stateMissing.slice(0, 5).join("; "),
      },
      {
        name: "order per partition key (deliveries, §1.2, §9.1)",
        pass: keyOrder.count === 0,
        detail:
          keyOrder.count === 0
            ? `${this.#deliveredOrdinal.size} records delivered in put order per key`
            : `${keyOrder.count} out of order; ${keyOrder.example}`,
      },
      {
        name: "order per FIFO group (effects, §3)",
        pass: groupOrder.count === 0,
        detail:
          groupOrder.count === 0
            ? "every group's jobs ran in send order (DLQ'd ones exempt)"
            : `${groupOrder.count} out of order; ${groupOrder.example}`,
      },
      {
        name: `no partition key stalled over ${seconds(bounds.partitionKeyMs)}`,
        pass: stalls.partitionKey.ms <= bounds.partitionKeyMs,
        detail: `longest: ${seconds(stalls.partitionKey.ms)}${stalls.partitionKey.key ? ` (${stalls.partitionKey.key})` : ""}`,
      },
      {
        name: `no FIFO group stalled over ${seconds(bounds.groupMs)}`,
        pass: stalls.group.ms <= bounds.groupMs,
        detail: `longest: ${seconds(stalls.group.ms)}${stalls.group.key ? ` (${stalls.group.key})` : ""}`,
      },
    ];
  }
}
