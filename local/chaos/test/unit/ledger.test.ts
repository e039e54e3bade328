import { describe, expect, it } from "vitest";
import type { CallWrite } from "../../src/doors.js";
import { compareSequence, Ledger, Phase, type StreamInput } from "../../src/ledger.js";
import type { PutEvent } from "../../src/oracle.js";
import { jobsToRedrive, recoveryDue } from "../../src/recover.js";

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();
/** Record n of key `key`: the requested event of call c-n (event ev-n), at sequence number 100 + n. */
const event = (n: number, key = "k", shardId = "shard-0"): StreamInput => ({
  kind: "event",
  key,
  shardId,
  sequenceNumber: String(100 + n),
  event: {
    eventId: `ev-${n}`,
    callId: `c-${n}`,
    type: "tool_call.requested",
    occurredAt: at(n),
  } satisfies PutEvent,
});
const poison = (sequenceNumber: string): StreamInput => ({
  kind: "poison",
  key: "k",
  shardId: "shard-0",
  sequenceNumber,
  event: undefined,
});
const write = (callId: string, eventIds: string[], status = "requested"): CallWrite => ({
  callId,
  version: eventIds.length,
  eventIds,
  status,
  statusEventId: eventIds.at(-1) ?? "",
});
const message = (id: string, attributes: Record<string, string> = {}) => ({
  id,
  body: "{}",
  attributes,
  group: undefined,
});
const job = (callId: string) => ({ callId, rejected: false });

describe("the chaos ledger", () => {
  it("accounts for an input applied, quarantined, in a dead-lettered failure record or in a DLQ, and for nothing else", () => {
    const ledger = new Ledger();
    for (const n of [1, 2, 3, 4]) ledger.recordStream(event(n));
    ledger.recordStream(poison("200"));
    ledger.recordJob(false, "g", job("job-1"), "{}", "m-1");
    ledger.recordJob(false, "g", undefined, "not json", "m-2");

    // ev-1 written into its call, ev-2's record quarantined, ev-3 in a failure record in the failure
    // queue's DLQ; the poison job in a DLQ.
    ledger.callWritten(write("c-1", ["ev-1"]), 0);
    ledger.quarantined("102");
    ledger.failureRecordDeadLettered("f-1", { shardId: "shard-0", start: "103", end: "103" });
    ledger.deadLettered("tool", message("d-1", { "pipeline.source.messageId": "m-2" }));

    expect(ledger.unsettled().names).toEqual([
      "event record shard-0/104 (ev-4)",
      "poison record shard-0/200",
      "job job-1",
    ]);
    ledger.callWritten(write("c-4", ["ev-4"]), 0);
    ledger.quarantined("200");
    // A job is accounted for once a write leaves its call finished, not when it starts.
    ledger.callWritten(write("job-1", ["req-job-1", "s"], "started"), 0);
    expect(ledger.unsettled().names).toEqual(["job job-1"]);
    ledger.callWritten(write("job-1", ["req-job-1", "s", "t"], "completed"), 0);
    expect(ledger.unsettled().count).toBe(0);
    // ev-2 and ev-3 are kept, not applied: the replay must still apply them.
    expect(ledger.unapplied().names).toEqual(["event ev-2", "event ev-3"]);
  });

  it("accounts for a given-up record once it is quarantined or its failure record is in the failure queue's DLQ, not when dlq-redrive is handed it", () => {
    const ledger = new Ledger();
    for (const n of [1, 2, 3, 4]) ledger.recordStream(event(n));
    ledger.failureRange("f-1", { shardId: "shard-0", start: "101", end: "102" });
    ledger.failureRange("f-2", { shardId: "shard-0", start: "103", end: "104" });
    expect(ledger.streamBacklog).toBe(0);
    expect(ledger.unsettled().count).toBe(4);

    ledger.quarantined("101");
    ledger.failureRecordDeadLettered("f-2", { shardId: "shard-0", start: "103", end: "104" });
    expect(ledger.unsettled().names).toEqual(["event record shard-0/102 (ev-2)"]);
    expect(ledger.givenUpNotQuarantined().names).toEqual([
      "event record shard-0/102 (ev-2)",
      "event record shard-0/103 (ev-3)",
      "event record shard-0/104 (ev-4)",
    ]);
    ledger.callWritten(write("c-2", ["ev-2"]), 0);
    ledger.quarantined("103");
    ledger.quarantined("104");
    expect(ledger.givenUpNotQuarantined().count).toBe(0);
  });

  it("takes a job's second send as the same input, and sends a dead-lettered job back once per time it reached a DLQ", () => {
    const ledger = new Ledger();
    ledger.recordJob(true, "g", job("j-1"), '{"callId":"j-1"}', "m-1");
    ledger.recordJob(true, "g", job("j-1"), '{"callId":"j-1"}', "m-2");
    expect(ledger.counts()).toMatchObject({ jobs: 1, jobMessages: 2 });

    ledger.deadLettered("fifo", message("m-1"));
    expect(ledger.deadValidJobs()).toEqual([
      { fifo: true, group: "g", callId: "j-1", body: '{"callId":"j-1"}' },
    ]);
    expect(ledger.deadMessagesOf("j-1")).toBe(1);
    ledger.deadLettered("fifo", message("d-9", { "pipeline.source.messageId": "m-2" }));
    expect(ledger.deadMessagesOf("j-1")).toBe(2);
  });

  it("sends a dead-lettered job back even when its call is finished: its outcome may be stored and never published", () => {
    // A last receive that stored the outcome and then could not publish it: SQS moved the job to the DLQ
    // (§2.3). Only its redelivery publishes the stored outcome, so the operator's redrive, which moves
    // every message, must not skip it.
    const ledger = new Ledger();
    ledger.recordJob(false, "g", job("j-1"), '{"callId":"j-1"}', "m-1");
    ledger.callWritten(write("j-1", ["x"], "completed"), 0);
    ledger.deadLettered("tool", message("m-1"));
    expect(ledger.unapplied().count).toBe(0);
    expect(ledger.deadValidJobs()).toEqual([
      { fifo: false, group: "g", callId: "j-1", body: '{"callId":"j-1"}' },
    ]);
    // The recovery goes on until it is sent back, although every input is applied; then it is done.
    expect(jobsToRedrive(ledger, new Map()).map((j) => j.callId)).toEqual(["j-1"]);
    expect(recoveryDue(ledger, new Map())).toBe(true);
    expect(recoveryDue(ledger, new Map([["j-1", 1]]))).toBe(false);
  });

  it("reads the outcomes the workers published from what the processor was handed", () => {
    const ledger = new Ledger();
    const data = (e: object) => Buffer.from(JSON.stringify(e)).toString("base64");
    ledger.processorDelivered(
      [
        { sequenceNumber: "1", data: data({ eventId: "a", callId: "j-1", type: "tool_call.completed" }) },
        {
          sequenceNumber: "2",
          data: data({ eventId: "b", callId: "j-2", type: "tool_call.failed", error: { retryable: true } }),
        },
        { sequenceNumber: "3", data: "not base64 json" },
      ],
      0,
    );
    expect([...ledger.published("j-1")]).toEqual(["tool_call.completed"]);
    // A retryable failure is no outcome.
    expect([...ledger.published("j-2")]).toEqual([]);
  });

  it("accounts for a record by its quarantine object only when the object holds the record's own bytes", () => {
    // A processor that stores a neighbour's bytes (or none) under a poison record's key has lost the record:
    // nothing else ever judges a poison record's quarantine, so the bytes the producer put are compared here.
    const ledger = new Ledger();
    const bytes = new TextEncoder().encode("not json {");
    ledger.recordStream({ ...poison("200"), data: bytes });
    ledger.recordStream({ ...poison("201"), data: bytes });
    ledger.quarantined("200", Buffer.from("something else").toString("base64"));
    ledger.quarantined("201", Buffer.from(bytes).toString("base64"));
    expect(ledger.unsettled().names).toEqual([
      "poison record shard-0/200 (quarantined with bytes that are not the record's)",
    ]);
    // S3 keeps the first object of a key (the writers' If-None-Match): a later write does not repair it.
    ledger.quarantined("200", Buffer.from(bytes).toString("base64"));
    expect(ledger.unsettled().count).toBe(1);
  });

  it("counts faults per phase and a replayed record quarantined again as given up again", () => {
    const ledger = new Ledger();
    ledger.fault({ callIds: ["job-1"], at: 5, what: "s3" });
    ledger.phase = Phase.Replay;
    ledger.invocationFault();
    ledger.replayWritten("900");
    ledger.quarantined("900");
    ledger.quarantined("900");
    expect(ledger.faultsByPhase).toEqual({ main: 1, replay: 1 });
    expect(ledger.givenUpAgain).toBe(1);
    expect(ledger.incidents("job-1")).toEqual([
      { at: 5, cause: "a fault hit the job's requests after the run" },
    ]);
  });

  it("records an emulator's own failure as an incident of each call its request named, not as a fault of the plan", () => {
    const ledger = new Ledger();
    ledger.emulatorError({ callIds: ["job-1", "job-2"], at: 7, what: "dynamodb", status: undefined });
    expect(ledger.faultsByPhase).toEqual({ main: 0, replay: 0 });
    expect(ledger.incidents("job-2")).toEqual([
      { at: 7, cause: "an emulator failed the job's requests after the run" },
    ]);
  });

  it("notes when a job's outcome was first stored: its call's item written completed or failed", () => {
    const ledger = new Ledger();
    ledger.callWritten(write("job-1", ["e1"], "started"), 10);
    ledger.callWritten(write("job-1", ["e1", "e2"], "completed"), 20);
    ledger.callWritten(write("job-1", ["e1", "e2", "e3"], "completed"), 30);
    expect(ledger.effects.finishedAt("job-1")).toBe(20);
    expect(ledger.effects.finishedAt("job-2")).toBeUndefined();
  });

  it("settles inputs for good and still finds one that is not", () => {
    const ledger = new Ledger();
    for (const n of [1, 2, 3]) ledger.recordStream(event(n));
    ledger.callWritten(write("c-1", ["ev-1"]), 0);
    ledger.callWritten(write("c-3", ["ev-3"]), 0);
    expect(ledger.unsettled().names).toEqual(["event record shard-0/102 (ev-2)"]);
    ledger.recordStream(event(4));
    expect(ledger.unsettled().count).toBe(2);
    ledger.callWritten(write("c-2", ["ev-2"]), 0);
    expect(ledger.unsettled().names).toEqual(["event record shard-0/104 (ev-4)"]);
  });

  it("waits for every replayed record to reach the processor, also one received before the replay reported it", () => {
    const ledger = new Ledger();
    ledger.phase = Phase.Replay;
    ledger.processorDelivered([{ sequenceNumber: "899", data: undefined }], 0);
    ledger.replayWritten("899");
    ledger.replayWritten("900");
    ledger.replayWritten("901");
    expect(ledger.replayPending).toBe(2);
    ledger.processorDelivered(
      [
        { sequenceNumber: "901", data: undefined },
        { sequenceNumber: "555", data: undefined },
      ],
      1,
    );
    expect(ledger.replayPending).toBe(1);
    ledger.processorDelivered([{ sequenceNumber: "900", data: undefined }], 2);
    expect(ledger.replayPending).toBe(0);
  });

  it("paces on records neither delivered nor given up, also those delivered or given up before their put was answered (§1.3)", () => {
    const ledger = new Ledger();
    ledger.processorDelivered([{ sequenceNumber: "101", data: undefined }], 1);
    ledger.failureRange("f-0", { shardId: "shard-1", start: "106", end: "106" });
    for (const n of [1, 2, 3, 4, 5]) ledger.recordStream(event(n));
    ledger.recordStream(event(6, "k", "shard-1"));
    expect(ledger.streamBacklog).toBe(4);
    ledger.failureRange("f-1", { shardId: "shard-0", start: "102", end: "104" });
    ledger.failureRange("f-1", { shardId: "shard-0", start: "102", end: "104" });
    expect(ledger.streamBacklog).toBe(1);
    expect(ledger.givenUp(event(3))).toBe(true);
    expect(ledger.givenUp(event(5))).toBe(false);
    // Its failure record came before its put was answered: given up all the same (the verdict exempts it).
    expect(ledger.givenUp(event(6, "k", "shard-1"))).toBe(true);
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
