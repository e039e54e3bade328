import { describe, expect, it } from "vitest";
import { compareSequence, type FinalState, Ledger, Phase } from "../src/ledger.js";

const bounds = { partitionKeyMs: 10_000, groupMs: 10_000 };
const empty: FinalState = { requested: new Set(), finished: new Set(), quarantined: new Set() };
const check = (ledger: Ledger, name: RegExp, final: FinalState = empty, timedOut = false) => {
  const found = ledger.checks(final, bounds, timedOut).find((c) => name.test(c.name));
  if (!found) throw new Error(`no check ${name}`);
  return found;
};
const event = (n: number, key = "k", shardId = "shard-0") =>
  ({ kind: "event", key, callId: `ev-${n}`, shardId, sequenceNumber: String(100 + n) }) as const;
const message = (id: string, attributes: Record<string, string> = {}) => ({
  id,
  body: "{}",
  attributes,
  group: undefined,
});

describe("the chaos ledger", () => {
  it("accounts for an input applied, quarantined, in a dead-lettered failure record or in a DLQ, and for nothing else", () => {
    // Prepare: four records and two jobs.
    const ledger = new Ledger();
    for (const n of [1, 2, 3, 4]) ledger.recordStream(event(n));
    ledger.recordStream({
      kind: "poison",
      key: "k",
      callId: undefined,
      shardId: "shard-0",
      sequenceNumber: "200",
    });
    ledger.recordJob(false, "g", "job-1", "{}", "m-1");
    ledger.recordJob(false, "g", undefined, "not json", "m-2");

    // Act: ev-1 applied, ev-2's record quarantined, ev-3 in a failure record in the failure queue's DLQ;
    // the poison job in a DLQ.
    ledger.effect({ kind: "call-state", callId: "ev-1" }, 0);
    ledger.effect({ kind: "quarantined", sequenceNumber: "102" }, 0);
    ledger.failureRecordDeadLettered("f-1", { shardId: "shard-0", start: "103", end: "103" });
    ledger.deadLettered("tool", message("d-1", { "pipeline.source.messageId": "m-2" }));

    // Assess: ev-4, the poison record and job-1 are not accounted for yet, and named.
    expect(ledger.unsettled()).toEqual({
      count: 3,
      names: ["event record shard-0/104 (ev-4)", "poison record shard-0/200", "job job-1"],
    });
    ledger.effect({ kind: "call-state", callId: "ev-4" }, 0);
    ledger.effect({ kind: "quarantined", sequenceNumber: "200" }, 0);
    ledger.effect({ kind: "job-completed", callId: "job-1" }, 0);
    expect(ledger.unsettled().count).toBe(0);
    // ev-2 and ev-3 are kept, not applied: the replay must still apply them.
    expect(ledger.unapplied().names).toEqual(["event ev-2", "event ev-3"]);
  });

  it("accounts for a given-up record once it is quarantined or its failure record is in the failure queue's DLQ, not when dlq-redrive is handed it", () => {
    // dlq-redrive may fail to store a failure record's records (its deadline, S3 errors) and, after
    // maxReceiveCount receives, SQS moves the failure record to the failure queue's DLQ (§2.3): the range
    // handed over says nothing about where its records are.
    const ledger = new Ledger();
    for (const n of [1, 2, 3, 4]) ledger.recordStream(event(n));
    ledger.failureRange("f-1", { shardId: "shard-0", start: "101", end: "102" });
    ledger.failureRange("f-2", { shardId: "shard-0", start: "103", end: "104" });
    // Handed over: out of the mapping's hands (the producer's pacing), not yet accounted for.
    expect(ledger.streamBacklog).toBe(0);
    expect(ledger.unsettled().count).toBe(4);

    ledger.effect({ kind: "quarantined", sequenceNumber: "101" }, 0);
    ledger.failureRecordDeadLettered("f-2", { shardId: "shard-0", start: "103", end: "104" });
    expect(ledger.unsettled().names).toEqual(["event record shard-0/102 (ev-2)"]);

    // Before the replay lists the quarantine, every given-up record not applied must be in it: ev-2 is
    // still with dlq-redrive, ev-3 and ev-4 wait in the DLQ for a redrive.
    expect(ledger.givenUpNotQuarantined()).toEqual({
      count: 3,
      names: [
        "event record shard-0/102 (ev-2)",
        "event record shard-0/103 (ev-3)",
        "event record shard-0/104 (ev-4)",
      ],
    });
    ledger.effect({ kind: "call-state", callId: "ev-2" }, 0);
    ledger.effect({ kind: "quarantined", sequenceNumber: "103" }, 0);
    ledger.effect({ kind: "quarantined", sequenceNumber: "104" }, 0);
    expect(ledger.givenUpNotQuarantined().count).toBe(0);
  });

  it("counts a second effect of one event or job as a duplicate, and a job's second send as the same input", () => {
    const ledger = new Ledger();
    ledger.recordStream(event(1));
    ledger.recordStream({ ...event(1), kind: "duplicate", sequenceNumber: "199" });
    ledger.recordJob(true, "g", "job-1", "{}", "m-1");
    ledger.recordJob(true, "g", "job-1", "{}", "m-2");
    ledger.effect({ kind: "call-state", callId: "ev-1" }, 0);
    ledger.effect({ kind: "job-completed", callId: "job-1" }, 0);
    expect(ledger.counts()).toMatchObject({ jobs: 1, jobMessages: 2, duplicateEffects: 0 });

    ledger.effect({ kind: "job-completed", callId: "job-1" }, 0);
    ledger.effect({ kind: "call-state", callId: "ev-1" }, 0);
    // A job's call is written by its lifecycle events several times: not an event's effect.
    ledger.effect({ kind: "call-state", callId: "job-1" }, 0);
    ledger.effect({ kind: "call-state", callId: "job-1" }, 0);

    expect(ledger.counts().duplicateEffects).toBe(2);
    expect(check(ledger, /each effect once/).pass).toBe(false);
  });

  it("finds a record of a key delivered before an earlier one of the same key, across shards", () => {
    const ledger = new Ledger();
    ledger.recordStream(event(1, "a", "parent"));
    ledger.recordStream(event(2, "b", "parent"));
    ledger.recordStream(event(3, "a", "child"));
    // Other keys may interleave in any order; key a's child record must not come before its parent's.
    ledger.processorDelivered(["102", "103"], 0);
    ledger.processorDelivered(["101", "103"], 0);
    const order = check(ledger, /order per partition key/);
    expect(order.pass).toBe(false);
    expect(order.detail).toBe("1 out of order; a: 103 delivered before an earlier record of its key");
  });

  it("passes in-order deliveries, redeliveries included", () => {
    const ledger = new Ledger();
    for (const n of [1, 2, 3]) ledger.recordStream(event(n));
    ledger.processorDelivered(["101", "102"], 0);
    ledger.processorDelivered(["102", "103"], 0);
    expect(check(ledger, /order per partition key/).pass).toBe(true);
  });

  it("checks a FIFO group's effects in send order, exempting a job that went to a DLQ (§3)", () => {
    const ledger = new Ledger();
    ledger.recordJob(true, "g", "j-1", "{}", "m-1");
    ledger.recordJob(true, "g", "j-2", "{}", "m-2");
    ledger.recordJob(true, "g", "j-3", "{}", "m-3");
    ledger.effect({ kind: "job-completed", callId: "j-2" }, 0);
    ledger.effect({ kind: "job-completed", callId: "j-1" }, 0);
    ledger.effect({ kind: "job-completed", callId: "j-3" }, 0);
    expect(check(ledger, /order per FIFO group/).pass).toBe(false);

    const exempt = new Ledger();
    exempt.recordJob(true, "g", "j-1", "{}", "m-1");
    exempt.recordJob(true, "g", "j-2", "{}", "m-2");
    exempt.deadLettered("fifo", message("m-1"));
    exempt.effect({ kind: "job-completed", callId: "j-2" }, 0);
    exempt.phase = Phase.Replay;
    exempt.effect({ kind: "job-completed", callId: "j-1" }, 0);
    expect(check(exempt, /order per FIFO group/).pass).toBe(true);
    expect(exempt.deadValidJobs()).toEqual([]);
  });

  it("offers a valid job found in a DLQ for the replay until it is applied", () => {
    const ledger = new Ledger();
    ledger.recordJob(true, "g", "j-1", '{"callId":"j-1"}', "m-1");
    ledger.deadLettered("fifo", message("m-1"));
    expect(ledger.deadValidJobs()).toEqual([
      { fifo: true, group: "g", callId: "j-1", body: '{"callId":"j-1"}' },
    ]);
  });

  it("measures a stall from a record's first delivery to its effect, and judges it against the bound", () => {
    const ledger = new Ledger();
    ledger.recordStream(event(1, "slow"));
    ledger.processorDelivered(["101"], 1_000);
    ledger.processorDelivered(["101"], 5_000);
    ledger.effect({ kind: "call-state", callId: "ev-1" }, 12_500);
    expect(ledger.stalls().partitionKey).toEqual({ ms: 11_500, key: "slow" });
    const stall = check(ledger, /no partition key stalled/);
    expect(stall).toMatchObject({ pass: false, detail: "longest: 11.5 s (slow)" });
  });

  it("reports a run out of time as in flight, never as lost", () => {
    const ledger = new Ledger();
    ledger.recordStream(event(1));
    const loss = check(ledger, /lost = 0/, empty, true);
    expect(loss.pass).toBe(true);
    expect(loss.detail).toBe("timed out: 1 not applied yet, in flight, not lost (event ev-1)");
    const judged = check(ledger, /lost = 0/, empty, false);
    expect(judged).toMatchObject({ pass: false, detail: "lost 1: event ev-1" });
  });

  it("holds the final state to the effects seen: a quarantined record in the bucket, a written call in the table", () => {
    const ledger = new Ledger();
    ledger.recordStream({ kind: "poison", key: "k", callId: undefined, shardId: "s", sequenceNumber: "7" });
    ledger.recordStream(event(1));
    // Nothing seen yet: nothing to hold the state to (the accounting check names what is missing).
    expect(check(ledger, /final state/).pass).toBe(true);
    ledger.effect({ kind: "quarantined", sequenceNumber: "7" }, 0);
    ledger.effect({ kind: "call-state", callId: "ev-1" }, 0);
    expect(check(ledger, /final state/).detail).toBe(
      "poison record 7 written to the quarantine but not there; call ev-1 written but not in the table",
    );
    const final = { ...empty, quarantined: new Set(["7"]), requested: new Set(["ev-1"]) };
    expect(check(ledger, /final state/, final).pass).toBe(true);
  });

  it("settles inputs for good and still finds one that is not", () => {
    const ledger = new Ledger();
    for (const n of [1, 2, 3]) ledger.recordStream(event(n));
    ledger.effect({ kind: "call-state", callId: "ev-1" }, 0);
    ledger.effect({ kind: "call-state", callId: "ev-3" }, 0);
    expect(ledger.unsettled().names).toEqual(["event record shard-0/102 (ev-2)"]);
    ledger.recordStream(event(4));
    expect(ledger.unsettled().count).toBe(2);
    ledger.effect({ kind: "call-state", callId: "ev-2" }, 0);
    expect(ledger.unsettled().names).toEqual(["event record shard-0/104 (ev-4)"]);
  });

  it("waits for every replayed record to reach the processor, whatever else it receives meanwhile", () => {
    const ledger = new Ledger();
    ledger.phase = Phase.Replay;
    ledger.replayWritten("900");
    ledger.replayWritten("901");
    expect(ledger.replayPending).toBe(2);

    ledger.processorDelivered(["901", "555"], 1);
    expect(ledger.replayPending).toBe(1);
    ledger.processorDelivered(["900", "901"], 2);
    expect(ledger.replayPending).toBe(0);
  });

  it("a replayed record the processor received before the replay reported it written is not pending", () => {
    // The record is in the stream as soon as PutRecords answers; the replay reports it only after marking
    // its quarantine objects, and the processor, polling meanwhile, has often received it by then.
    const ledger = new Ledger();
    ledger.phase = Phase.Replay;
    ledger.processorDelivered(["900"], 1);
    ledger.replayWritten("900");
    ledger.replayWritten("901");
    expect(ledger.replayPending).toBe(1);

    ledger.processorDelivered(["901"], 2);
    expect(ledger.replayPending).toBe(0);
  });

  it("paces on records neither delivered nor given up: a record given up for its age is never delivered (§1.3)", () => {
    const ledger = new Ledger();
    for (const n of [1, 2, 3, 4, 5]) ledger.recordStream(event(n));
    expect(ledger.streamBacklog).toBe(5);

    // ev-1 delivered (twice: a retry counts once), a workers' record (not produced here) delivered too.
    ledger.processorDelivered(["101", "101", "777"], 1);
    // ev-2 to ev-4 given up before any invocation (RecordAgeExceeded), named by their failure record.
    ledger.failureRange("f-1", { shardId: "shard-0", start: "102", end: "104" });
    ledger.failureRange("f-1", { shardId: "shard-0", start: "102", end: "104" });

    expect(ledger.streamBacklog).toBe(1);
    expect(ledger.deliveredStream).toBe(2);
    ledger.processorDelivered(["105"], 2);
    expect(ledger.streamBacklog).toBe(0);
  });

  it("counts a record delivered or given up before its put was answered", () => {
    // The mapping can read a record, and even give it up, before PutRecords' answer reaches the producer.
    const ledger = new Ledger();
    ledger.processorDelivered(["101"], 1);
    ledger.failureRange("f-1", { shardId: "shard-1", start: "102", end: "103" });
    ledger.recordStream(event(1));
    ledger.recordStream(event(2, "k", "shard-1"));
    ledger.recordStream(event(3));
    expect(ledger.streamBacklog).toBe(1);
  });

  it("compares sequence numbers as the big numbers they are", () => {
    expect(compareSequence("9", "10")).toBeLessThan(0);
    expect(compareSequence("495", "495")).toBe(0);
    expect(
      compareSequence(
        "49600000000000000000000000000000000000000000000000000002",
        "49600000000000000000000000000000000000000000000000000001",
      ),
    ).toBeGreaterThan(0);
  });
});
