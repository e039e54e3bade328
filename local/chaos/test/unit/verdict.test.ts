import { describe, expect, it } from "vitest";
import type { CallWrite } from "../../src/doors.js";
import { Ledger, type StreamInput } from "../../src/ledger.js";
import type { PutEvent, TableItem } from "../../src/oracle.js";
import { CheckName, type FinalState, judge, type WitnessView } from "../../src/verdict.js";
import type { WitnessEffect } from "../../src/witness.js";

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();
const bounds = { partitionKeyMs: 10_000, groupMs: 10_000 };
const noWitness: WitnessView = { runs: () => [], effects: () => [] };
const FIFO_QUEUE = "http://127.0.0.1:4566/000000000000/local-session-jobs.fifo";
const sqs = (action: string, request: object, answer: object, at: number) => ({
  target: `AmazonSQS.${action}`,
  request: Buffer.from(JSON.stringify({ QueueUrl: FIFO_QUEUE, ...request })),
  status: 200,
  answer: Buffer.from(JSON.stringify(answer)),
  at,
});
const received = (ledger: Ledger, at: number, callId: string, handle: string) =>
  ledger.holds.seen(
    sqs(
      "ReceiveMessage",
      {},
      { Messages: [{ MessageId: `m-${callId}`, ReceiptHandle: handle, Body: JSON.stringify({ callId }) }] },
      at,
    ),
  );
const changedVisibility = (ledger: Ledger, at: number, handle: string, seconds: number) =>
  ledger.holds.seen(
    sqs("ChangeMessageVisibility", { ReceiptHandle: handle, VisibilityTimeout: seconds }, {}, at),
  );
const deleted = (ledger: Ledger, at: number, handle: string) =>
  ledger.holds.seen(sqs("DeleteMessage", { ReceiptHandle: handle }, {}, at));
const record = (n: number, event: PutEvent, shardId = "shard-0"): StreamInput => ({
  kind: "event",
  key: "k",
  shardId,
  sequenceNumber: String(100 + n),
  event,
});
const requested: PutEvent = { eventId: "r", callId: "c", type: "tool_call.requested", occurredAt: at(0) };
const started: PutEvent = {
  eventId: "s",
  callId: "c",
  type: "tool_call.started",
  occurredAt: at(1),
  attempt: 1,
};
const write = (version: number, eventIds: string[], status: string): CallWrite => ({
  callId: "c",
  version,
  eventIds,
  status,
  statusEventId: eventIds.at(-1) ?? "",
});
const item: TableItem = {
  callId: "c",
  status: "started",
  statusEvent: { eventId: "s" },
  requestedAt: at(0),
  startedAt: at(1),
  attempts: 1,
  version: 2,
  recentEventIds: ["r", "s"],
};
const final = (items: TableItem[] = [item]): FinalState => ({
  items: new Map(items.map((i) => [i.callId, i])),
  results: new Map(),
  quarantined: new Set(),
});
const named = (checks: readonly { name: string; pass: boolean; detail: string }[], name: string) =>
  checks.find((c) => c.name === name) as { pass: boolean; detail: string };

/** The key stall check of a run judged now, that ended at `endedAt` if given. */
const keyStall = (ledger: Ledger, endedAt?: number) =>
  judge({
    ledger,
    witness: noWitness,
    final: final([]),
    bounds,
    timedOut: false,
    ...(endedAt !== undefined ? { endedAt } : {}),
  }).checks.find((c) => c.name.startsWith("no partition key stalled"));

function twoEventCall(writes: CallWrite[]): Ledger {
  const ledger = new Ledger();
  ledger.recordStream(record(1, requested));
  ledger.recordStream(record(2, started));
  for (const w of writes) ledger.callWritten(w, 0);
  return ledger;
}

describe("the verdict", () => {
  it("passes a call whose events were applied in put order and whose item is what the oracle expects", () => {
    const ledger = twoEventCall([write(1, ["r"], "requested"), write(2, ["r", "s"], "started")]);
    const { checks } = judge({ ledger, witness: noWitness, final: final(), bounds, timedOut: false });
    expect(checks.filter((c) => !c.pass)).toEqual([]);
  });

  it("names every check and says what it saw, in the table's order, for a run that passes and one out of time", () => {
    const ledger = twoEventCall([write(1, ["r"], "requested"), write(2, ["r", "s"], "started")]);
    const judged = (timedOut: boolean) =>
      judge({ ledger, witness: noWitness, final: final(), bounds, timedOut }).checks.map((c) => [
        c.name,
        c.pass,
        c.detail,
      ]);

    expect(judged(false)).toEqual([
      [CheckName.Accounted, true, "2 records, 0 messages; unaccounted 0"],
      [CheckName.Lost, true, "lost 0"],
      [CheckName.ToolEffects, true, "0 jobs; wrong 0"],
      [
        CheckName.ToolRuns,
        true,
        "0 runs, at most 0 per job; 0 jobs run more than once; without a cause 0; senders recorded 0 (0 of two or more invocations), inferred 0",
      ],
      [CheckName.SameKey, true, "yes"],
      [CheckName.Outcomes, true, "0 jobs"],
      [CheckName.Oracle, true, "1 items; mismatches 0"],
      [CheckName.EffectOrder, true, "violations 0"],
      [CheckName.NoRegression, true, "1 calls written"],
      [CheckName.FifoOrder, true, "every group's jobs took effect in send order (DLQ'd ones exempt)"],
      ["no partition key stalled over 10.0 s", true, "longest: 0.0 s"],
      ["no FIFO group stalled over 10.0 s", true, "longest: 0.0 s"],
    ]);
    expect(judged(true).slice(0, 3)).toEqual([
      [CheckName.Accounted, true, "not judged: timed out (2 records, 0 messages; unaccounted 0)"],
      [CheckName.Lost, true, "not judged: timed out (lost 0)"],
      [CheckName.ToolEffects, true, "not judged: timed out (no job had more than one effect)"],
    ]);
  });

  it("fails the effect order when a call's later event was applied first, though the item ends the same", () => {
    const ledger = twoEventCall([write(2, ["s", "r"], "started")]);
    const verdict = judge({ ledger, witness: noWitness, final: final(), bounds, timedOut: false });
    expect(named(verdict.checks, CheckName.EffectOrder)).toEqual({
      name: CheckName.EffectOrder,
      pass: false,
      detail: "violations 1: c: s applied before r, which was put before it",
    });
    expect(named(verdict.checks, CheckName.Oracle).pass).toBe(true);
  });

  it("exempts an event the mapping gave up: its replay puts it back after later ones", () => {
    const ledger = twoEventCall([write(1, ["s"], "started"), write(2, ["s", "r"], "started")]);
    ledger.failureRange("f", { shardId: "shard-0", start: "101", end: "101" });
    const verdict = judge({ ledger, witness: noWitness, final: final(), bounds, timedOut: false });
    expect(named(verdict.checks, CheckName.EffectOrder).pass).toBe(true);
  });

  it("exempts an event the mapping gave up before its put was answered: its failure record came first", () => {
    // A chunk's put is answered only once all its records are written (strict order: a key's next record
    // waits for the next request), and the mapping reads, fails and gives up the first ones before that.
    const ledger = new Ledger();
    ledger.processorDelivered([{ sequenceNumber: "101", data: undefined }], 1_000);
    ledger.failureRange("f", { shardId: "shard-0", start: "101", end: "101" });
    ledger.recordStream(record(1, requested));
    ledger.recordStream(record(2, started));
    ledger.processorDelivered([{ sequenceNumber: "102", data: undefined }], 1_500);
    ledger.callWritten(write(1, ["s"], "started"), 2_000);
    // The replay applies the given-up event long after: neither out of order nor a stall of its key.
    ledger.callWritten(write(2, ["s", "r"], "started"), 600_000);
    const verdict = judge({ ledger, witness: noWitness, final: final(), bounds, timedOut: false });
    expect(named(verdict.checks, CheckName.EffectOrder)).toMatchObject({ pass: true });
    expect(keyStall(ledger)).toMatchObject({ pass: true, detail: "longest: 0.5 s (k)" });
  });

  it("fails the oracle and the loss checks for an event that was never written, and names a table item nobody asked for", () => {
    const ledger = twoEventCall([write(1, ["r"], "requested")]);
    const stray: TableItem = { callId: "stray", status: "requested" };
    const verdict = judge({
      ledger,
      witness: noWitness,
      final: final([
        {
          ...item,
          status: "requested",
          statusEvent: { eventId: "r" },
          recentEventIds: ["r"],
          version: 1,
          startedAt: undefined,
          attempts: 0,
        },
        stray,
      ]),
      bounds,
      timedOut: false,
    });
    expect(named(verdict.checks, CheckName.Lost)).toMatchObject({ pass: false, detail: "lost 1: event s" });
    expect(named(verdict.checks, CheckName.Oracle).detail).toMatch(
      /mismatches 2: c: status "requested", expected "started".*; stray: an item no input asked for$/,
    );
  });

  it("says a run out of time was not judged where only the end shows, never that it lost anything", () => {
    const ledger = twoEventCall([write(1, ["r"], "requested")]);
    const { checks } = judge({ ledger, witness: noWitness, final: final([]), bounds, timedOut: true });
    for (const name of [CheckName.Lost, CheckName.Accounted, CheckName.Oracle, CheckName.Outcomes])
      expect(named(checks, name)).toMatchObject({
        pass: true,
        detail: expect.stringMatching(/^not judged: timed out/),
      });
  });

  it("expects a job's call from the job as it was sent, not from what the downstream saw: a job never run is no failure", () => {
    // A worker that records a valid job as failed without running its tool: the witness saw nothing, and the
    // model must still say "completed", as the producer sent a job the downstream accepts.
    const ledger = new Ledger();
    ledger.recordStream(
      record(1, { eventId: "req-j", callId: "j", type: "tool_call.requested", occurredAt: at(0) }),
    );
    ledger.recordJob(false, "g", { callId: "j", rejected: false }, "{}", "m-1");
    ledger.callWritten({ ...write(2, ["req-j", "failed-j"], "failed"), callId: "j" }, 0);
    ledger.processorDelivered(
      [
        {
          sequenceNumber: "900",
          data: Buffer.from(
            JSON.stringify({ eventId: "failed-j", callId: "j", type: "tool_call.failed", occurredAt: at(5) }),
          ).toString("base64"),
        },
      ],
      0,
    );
    const failed: TableItem = {
      callId: "j",
      status: "failed",
      requestedAt: at(0),
      recentEventIds: ["req-j", "failed-j"],
      version: 2,
    };
    const { checks } = judge({ ledger, witness: noWitness, final: final([failed]), bounds, timedOut: false });
    expect(named(checks, CheckName.Oracle)).toMatchObject({
      pass: false,
      detail: expect.stringContaining('j: status "failed", expected "completed"'),
    });
    expect(named(checks, CheckName.Outcomes)).toMatchObject({
      pass: false,
      detail: expect.stringContaining("j: no tool_call.completed published"),
    });
  });

  it("fails a job whose outcome was published both ways: a consumer of the stream saw it fail and complete", () => {
    const ledger = new Ledger();
    ledger.recordJob(false, "g", { callId: "j", rejected: false }, "{}", "m-1");
    const published = (n: number, type: string) => ({
      sequenceNumber: String(900 + n),
      data: Buffer.from(JSON.stringify({ eventId: `e-${n}`, callId: "j", type, occurredAt: at(n) })).toString(
        "base64",
      ),
    });
    ledger.processorDelivered([published(1, "tool_call.failed"), published(2, "tool_call.completed")], 0);
    const effect: WitnessEffect = { callId: "j", effectId: "j#1", key: "k", at: 0, ordinal: 0 };
    const witness: WitnessView = { runs: () => [], effects: (callId) => (callId === "j" ? [effect] : []) };
    const { checks } = judge({
      ledger,
      witness,
      final: { ...final([]), results: new Map([["j", JSON.stringify({ effectId: "j#1" })]]) },
      bounds,
      timedOut: false,
    });
    expect(named(checks, CheckName.Outcomes)).toMatchObject({
      pass: false,
      detail: "1: j: tool_call.failed published as well",
    });
  });

  it("judges a FIFO group's order on the witness's effects, a job that went to a DLQ exempt (§3)", () => {
    const effectOf = (callId: string, ordinal: number): WitnessEffect => ({
      callId,
      effectId: `${callId}#1`,
      key: callId,
      at: ordinal,
      ordinal,
    });
    const effects = new Map([
      ["j-1", [effectOf("j-1", 2)]],
      ["j-2", [effectOf("j-2", 1)]],
      ["j-3", [effectOf("j-3", 3)]],
    ]);
    const witness: WitnessView = { runs: () => [], effects: (callId) => effects.get(callId) ?? [] };
    const ledger = new Ledger();
    for (const [i, callId] of ["j-1", "j-2", "j-3"].entries())
      ledger.recordJob(true, "g", { callId, rejected: false }, "{}", `m-${i}`);
    expect(
      named(judge({ ledger, witness, final: final([]), bounds, timedOut: true }).checks, CheckName.FifoOrder),
    ).toMatchObject({
      pass: false,
      detail: "1 out of order; g: j-2 took effect before j-1, sent before it",
    });
    ledger.deadLettered("fifo", { id: "m-0", body: "{}", attributes: {}, group: "g" });
    expect(
      named(judge({ ledger, witness, final: final([]), bounds, timedOut: true }).checks, CheckName.FifoOrder)
        .pass,
    ).toBe(true);
  });

  it("counts a delivered job still without its effect when the run stopped as held until then: hiding it is no timeout", () => {
    // A fifo-worker that hides a failed job for hours makes the run time out; the job was delivered and its
    // group held past the bound, which is a failure seen on the way, not slowness (verdictOf then says FAIL).
    const ledger = new Ledger();
    ledger.recordJob(true, "g", { callId: "j-1", rejected: false }, "{}", "m-1");
    ledger.recordJob(true, "g", { callId: "j-2", rejected: true }, "{}", "m-2");
    ledger.holds.watch(FIFO_QUEUE, 3_000);
    received(ledger, 0, "j-2", "h-2");
    ledger.fifoDelivered(["j-2"], 0);
    received(ledger, 1_000, "j-1", "h-1");
    ledger.fifoDelivered(["j-1"], 1_000);
    changedVisibility(ledger, 1_500, "h-1", 43_200);
    const stall = (endedAt?: number) =>
      judge({
        ledger,
        witness: noWitness,
        final: final([]),
        bounds,
        timedOut: true,
        ...(endedAt !== undefined ? { endedAt } : {}),
      }).checks.find((c) => c.name.startsWith("no FIFO group stalled"));
    expect(stall(20_000)).toMatchObject({
      pass: false,
      detail: "longest: 19.0 s (g), still without its effect",
    });
    // A job the downstream refuses (j-2, delivered first) is held for its hide (3 s, the queue's visibility),
    // never to an effect it will not have.
    expect(stall(5_000)).toMatchObject({
      pass: true,
      detail: "longest: 4.0 s (g), still without its effect",
    });
  });

  it("does not count as a FIFO stall the time a job's message waited visible behind other groups' backlog", () => {
    // Seed 1 at 100,000 events: received, failed, visible again after the queue's visibility, then taken by
    // a poller only after the backlog ahead of it; it held its group for 8 s of the 80 s to its effect.
    const ledger = new Ledger();
    ledger.recordJob(true, "g", { callId: "j-1", rejected: false }, "{}", "m-1");
    ledger.holds.watch(FIFO_QUEUE, 6_000);
    received(ledger, 0, "j-1", "h-1");
    ledger.fifoDelivered(["j-1"], 0);
    received(ledger, 78_000, "j-1", "h-2");
    deleted(ledger, 80_000, "h-2");
    const witness: WitnessView = {
      runs: () => [],
      effects: (callId): WitnessEffect[] =>
        callId === "j-1" ? [{ callId, effectId: "e-1", key: "k", at: 79_500, ordinal: 1 }] : [],
    };
    const check = judge({ ledger, witness, final: final([]), bounds, timedOut: false }).checks.find((c) =>
      c.name.startsWith("no FIFO group stalled"),
    );
    expect(check).toMatchObject({ pass: true, detail: "longest: 8.0 s (g)" });
  });

  it("fails the FIFO stall check when the SQS front saw no receive of a delivered job: a witness that sees nothing proves nothing", () => {
    const ledger = new Ledger();
    ledger.recordJob(true, "g", { callId: "j-1", rejected: false }, "{}", "m-1");
    ledger.holds.watch(FIFO_QUEUE, 6_000);
    ledger.fifoDelivered(["j-1"], 0);
    const check = judge({
      ledger,
      witness: noWitness,
      final: final([]),
      bounds,
      timedOut: false,
      endedAt: 1_000,
    }).checks.find((c) => c.name.startsWith("no FIFO group stalled"));
    expect(check).toMatchObject({ pass: false });
    expect(check?.detail).toContain("the SQS front saw no receive of 1 delivered job (j-1)");
  });

  it("measures a key's stall from a record's first delivery to its effect, and judges it against the bound", () => {
    const ledger = new Ledger();
    ledger.recordStream(record(1, requested));
    ledger.processorDelivered([{ sequenceNumber: "101", data: undefined }], 1_000);
    ledger.processorDelivered([{ sequenceNumber: "101", data: undefined }], 5_000);
    ledger.callWritten(write(1, ["r"], "requested"), 12_500);
    const stall = judge({ ledger, witness: noWitness, final: final([]), bounds, timedOut: true }).checks.find(
      (c) => c.name.startsWith("no partition key stalled"),
    );
    expect(stall).toMatchObject({ pass: false, detail: "longest: 11.5 s (k)" });
  });

  // A group is held by whichever of its messages is in flight: every message whose hold the front saw
  // must be measured, whatever became of its job (§3: a FIFO group delivers nothing behind a message in flight).
  const groupStall = (ledger: Ledger, endedAt: number) =>
    judge({ ledger, witness: noWitness, final: final([]), bounds, timedOut: false, endedAt }).checks.find(
      (c) => c.name.startsWith("no FIFO group stalled"),
    );

  it("counts the hold of a job the downstream refuses: its message in flight holds its group all the same", () => {
    const ledger = new Ledger();
    ledger.recordJob(true, "g", { callId: "j-1", rejected: true }, "{}", "m-j-1");
    ledger.holds.watch(FIFO_QUEUE, 3_000);
    received(ledger, 0, "j-1", "h-1");
    ledger.fifoDelivered(["j-1"], 0);
    changedVisibility(ledger, 500, "h-1", 43_200);
    deleted(ledger, 60_000, "h-1");
    expect(groupStall(ledger, 70_000)).toMatchObject({ pass: false, detail: "longest: 60.0 s (g)" });
  });

  it("counts the holds of a job that went to the DLQ: hiding it for long on every receive stalls its group", () => {
    // maxReceiveCount bounds the receives, not how long each hides: the product sets that (§2.6).
    const ledger = new Ledger();
    ledger.recordJob(true, "g", { callId: "j-1", rejected: false }, "{}", "m-j-1");
    ledger.holds.watch(FIFO_QUEUE, 3_000);
    ledger.fifoDelivered(["j-1"], 0);
    for (let n = 0; n < 3; n++) {
      received(ledger, n * 700_000, "j-1", `h-${n}`);
      changedVisibility(ledger, n * 700_000 + 100, `h-${n}`, 600);
    }
    ledger.deadLettered("fifo", { id: "m-j-1", body: "{}", attributes: {}, group: "g" });
    expect(groupStall(ledger, 3_000_000)).toMatchObject({ pass: false });
  });

  it("counts the holds of a job sent back from the DLQ: its new message holds its group as the first did", () => {
    const ledger = new Ledger();
    ledger.recordJob(true, "g", { callId: "j-1", rejected: false }, "{}", "m-j-1");
    ledger.holds.watch(FIFO_QUEUE, 3_000);
    received(ledger, 0, "j-1", "h-1");
    ledger.fifoDelivered(["j-1"], 0);
    ledger.deadLettered("fifo", { id: "m-j-1", body: "{}", attributes: {}, group: "g" });
    // The redrive's copy: a new MessageId, the same call; hidden 12 h and deleted after 90 s.
    ledger.holds.seen(
      sqs(
        "ReceiveMessage",
        {},
        {
          Messages: [
            { MessageId: "m-redriven", ReceiptHandle: "h-2", Body: JSON.stringify({ callId: "j-1" }) },
          ],
        },
        10_000,
      ),
    );
    changedVisibility(ledger, 10_100, "h-2", 43_200);
    deleted(ledger, 100_000, "h-2");
    expect(groupStall(ledger, 200_000)).toMatchObject({ pass: false, detail: "longest: 90.0 s (g)" });
  });

  it("counts the hold of a message no job of the run sent: whoever sent it, it holds its group in flight", () => {
    // A product that sends a message of its own into a group (a re-send for a backoff, a marker) and keeps
    // it hidden holds the group's jobs back before any receive of theirs, where no job's hold shows it.
    const ledger = new Ledger();
    ledger.recordJob(true, "g", { callId: "j-1", rejected: false }, "{}", "m-j-1");
    ledger.holds.watch(FIFO_QUEUE, 3_000);
    ledger.holds.seen(
      sqs(
        "ReceiveMessage",
        {},
        {
          Messages: [
            { MessageId: "m-own", ReceiptHandle: "h-own", Body: JSON.stringify({ callId: "not-a-job" }) },
          ],
        },
        0,
      ),
    );
    changedVisibility(ledger, 100, "h-own", 43_200);
    deleted(ledger, 60_000, "h-own");
    received(ledger, 60_500, "j-1", "h-1");
    ledger.fifoDelivered(["j-1"], 60_500);
    deleted(ledger, 61_000, "h-1");
    expect(groupStall(ledger, 70_000)).toMatchObject({
      pass: false,
      detail: "longest: 60.0 s (message m-own, of no delivered job)",
    });
  });

  it("counts the hold of a poison message: its group is held while it is in flight, though it names no call", () => {
    const ledger = new Ledger();
    ledger.recordJob(true, "g", undefined, "not json", "m-poison");
    ledger.holds.watch(FIFO_QUEUE, 3_000);
    ledger.holds.seen(
      sqs(
        "ReceiveMessage",
        {},
        { Messages: [{ MessageId: "m-poison", ReceiptHandle: "h-p", Body: "not json" }] },
        0,
      ),
    );
    changedVisibility(ledger, 100, "h-p", 43_200);
    deleted(ledger, 60_000, "h-p");
    expect(groupStall(ledger, 70_000)).toMatchObject({ pass: false, detail: "longest: 60.0 s (g)" });
  });

  it("measures a replayed record's stall from its delivery to its effect, as the key's first delivery is", () => {
    // The replay puts a given-up record back under a new sequence number; the processor holds its key as it
    // would any record's, and faults stay on during the replay.
    const ledger = new Ledger();
    ledger.recordStream(record(1, requested));
    ledger.failureRange("f", { shardId: "shard-0", start: "101", end: "101" });
    ledger.replayWritten("5000");
    const data = Buffer.from(JSON.stringify(requested)).toString("base64");
    ledger.processorDelivered([{ sequenceNumber: "5000", data }], 1_000);
    ledger.callWritten(write(1, ["r"], "requested"), 61_000);
    const stall = keyStall(ledger);
    expect(stall).toMatchObject({ pass: false, detail: "longest: 60.0 s (k)" });
  });

  it("does not measure a replayed record that carries an event the run did not put (a worker's)", () => {
    // A worker publishes its call's started and completed events; one given up and replayed is folded into
    // an item the worker already wrote, which changes nothing: it has no effect to wait for.
    const ledger = new Ledger();
    ledger.recordStream(record(1, requested));
    ledger.callWritten(write(1, ["r"], "requested"), 500);
    const workers: PutEvent = {
      eventId: "w-started",
      callId: "c",
      type: "tool_call.started",
      occurredAt: at(1),
      attempt: 1,
    };
    ledger.failureRange("f", { shardId: "shard-0", start: "7000", end: "7000" });
    ledger.replayWritten("8000");
    ledger.processorDelivered(
      [{ sequenceNumber: "8000", data: Buffer.from(JSON.stringify(workers)).toString("base64") }],
      1_000,
    );
    const stall = keyStall(ledger, 700_000);
    expect(stall).toMatchObject({ pass: true });
  });

  it("exempts a replayed record the mapping gave up again: a stuck event's writes are refused until its round", () => {
    const ledger = new Ledger();
    ledger.recordStream(record(1, requested));
    ledger.failureRange("f", { shardId: "shard-0", start: "101", end: "101" });
    const data = Buffer.from(JSON.stringify(requested)).toString("base64");
    // The first replay (5000) is given up again, by a failure record or quarantined again; the second
    // (6000) is applied a second after its delivery.
    ledger.replayWritten("5000");
    ledger.processorDelivered([{ sequenceNumber: "5000", data }], 1_000);
    ledger.failureRange("f-again", { shardId: "shard-0", start: "5000", end: "5000" });
    ledger.quarantined("5000");
    ledger.replayWritten("6000");
    ledger.processorDelivered([{ sequenceNumber: "6000", data }], 90_000);
    ledger.callWritten(write(1, ["r"], "requested"), 91_000);
    const stall = keyStall(ledger);
    expect(stall).toMatchObject({ pass: true, detail: "longest: 1.0 s (k)" });
  });
});
