/**
 * The ledger's accounting alone (no emulator): where each kind of input counts as found, and what is
 * named missing. The whole run is exercised in local-pipeline.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { DrainedMessage } from "../../src/pipeline/drain-queue.js";
import {
  callsToRead,
  emptyObserved,
  failureRangeOf,
  missingInputs,
  type Observed,
  type PutRecord,
  scenarioInputs,
} from "../../src/pipeline/input-ledger.js";
import type { JobItem, Scenario } from "../../src/pipeline/scenario.js";

const data = new Uint8Array();
const event = (
  callId: string,
  kind: "event" | "stuck" | "duplicate" = "event",
): Scenario["stream"][number] => ({
  kind,
  data,
  partitionKey: callId,
  callId,
  eventId: `e-${callId}`,
  type: "tool_call.requested",
});
const poisonRecord: Scenario["stream"][number] = { kind: "poison", data, partitionKey: "p" };
const job = (callId: string): JobItem => ({
  kind: "job",
  body: `{"callId":"${callId}"}`,
  callId,
  group: "s1",
  transient: false,
  enqueuedAt: 0,
});
const poisonJob = (body: string): JobItem => ({ kind: "poison", body, group: "s1" });
const dead = (id: string, body: string, attributes: Record<string, string> = {}): DrainedMessage => ({
  id,
  body,
  attributes,
  group: undefined,
});

/** A scenario put: each stream record stored on shard 0 at sequence number 100 + its position. */
function putScenario(scenario: Scenario, jobIds: Map<JobItem, string>, fifoIds = new Map<JobItem, string>()) {
  const puts: PutRecord[] = scenario.stream.map((item, i) => ({
    item,
    shardId: "shardId-000000000000",
    sequenceNumber: String(100 + i),
  }));
  return scenarioInputs(scenario, puts, jobIds, fifoIds);
}

describe("scenarioInputs", () => {
  it("expects valid and stuck events, poison records, valid jobs and poison jobs; duplicates are not inputs of their own", () => {
    const poison = poisonJob("not json");
    const fifoPoison = poisonJob("{}");
    const scenario: Scenario = {
      stream: [event("c1"), event("c1", "duplicate"), event("c2", "stuck"), poisonRecord],
      jobs: [job("j1"), poison],
      fifoJobs: [job("j2"), fifoPoison],
    };
    const inputs = putScenario(scenario, new Map([[poison, "m-1"]]), new Map([[fifoPoison, "m-2"]]));
    expect(inputs.events.map((e) => e.sequenceNumber)).toEqual(["100", "102"]);
    expect(inputs.poisonRecords.map((e) => e.sequenceNumber)).toEqual(["103"]);
    expect(inputs.validJobs.map((j) => j.callId)).toEqual(["j1", "j2"]);
    expect([...inputs.poisonJobIds]).toEqual(["m-1", "m-2"]);
    expect(inputs.expected).toBe(2 + 1 + 2 + 2);
  });
});

describe("missingInputs", () => {
  const poison = poisonJob("not json");
  const scenario: Scenario = {
    stream: [event("c1"), event("c2"), poisonRecord],
    jobs: [job("j1"), poison],
    fifoJobs: [],
  };
  const inputs = putScenario(scenario, new Map([[poison, "m-1"]]));

  it("names every input while nothing has been seen", () => {
    expect(missingInputs(inputs, emptyObserved())).toEqual([
      "event c1",
      "event c2",
      "poison record 102",
      "job j1",
      "poison job m-1",
    ]);
    expect(callsToRead(inputs, emptyObserved())).toEqual(["c1", "c2", "j1"]);
  });

  it("finds an event applied, quarantined or in a range the mapping gave up on; a poison record only in the last two", () => {
    const observed: Observed = {
      ...emptyObserved(),
      calls: new Map([["c1", { callId: "c1", requestedAt: "2026-01-01T00:00:00Z" }]]),
      quarantined: new Set(["102"]),
    };
    expect(missingInputs(inputs, observed)).toEqual(["event c2", "job j1", "poison job m-1"]);
    observed.failures.set("f-1", { shardId: "shardId-000000000000", start: "101", end: "101" });
    expect(missingInputs(inputs, observed)).toEqual(["job j1", "poison job m-1"]);
    // The same range on another shard keeps nothing of this one.
    observed.failures.set("f-1", { shardId: "shardId-000000000001", start: "100", end: "102" });
    expect(missingInputs(inputs, observed)).toEqual(["event c2", "job j1", "poison job m-1"]);
  });

  it("finds a job settled (completed or failed) or in a DLQ by its body; a job only started is missing", () => {
    const observed = emptyObserved();
    observed.calls.set("j1", { callId: "j1", status: "started" });
    expect(missingInputs(inputs, observed)).toContain("job j1");
    observed.calls.set("j1", { callId: "j1", status: "failed" });
    expect(missingInputs(inputs, observed)).not.toContain("job j1");
    observed.calls.delete("j1");
    observed.dead.set("d-1", dead("d-1", `{"callId":"j1"}`));
    expect(missingInputs(inputs, observed)).not.toContain("job j1");
    expect(callsToRead(inputs, observed)).toEqual(["c1", "c2", "j1"]);
  });

  it("finds a poison job in a DLQ under its own id (SQS moved it, §2.3) or the worker's source attribute", () => {
    const observed = emptyObserved();
    observed.dead.set("m-1", dead("m-1", "not json"));
    expect(missingInputs(inputs, observed)).not.toContain("poison job m-1");
    observed.dead.clear();
    observed.dead.set("d-9", dead("d-9", "not json", { "pipeline.source.messageId": "m-1" }));
    expect(missingInputs(inputs, observed)).not.toContain("poison job m-1");
    observed.dead.set("d-9", dead("d-9", "not json", { "pipeline.source.messageId": "m-7" }));
    expect(missingInputs(inputs, observed)).toContain("poison job m-1");
  });
});

describe("failureRangeOf", () => {
  it("reads the shard and the sequence numbers of an on-failure destination's record (§1.6)", () => {
    const body = JSON.stringify({
      requestContext: { condition: "RetryAttemptsExhausted" },
      KinesisBatchInfo: {
        shardId: "shardId-000000000003",
        startSequenceNumber: "4958",
        endSequenceNumber: "4961",
        batchSize: 2,
      },
    });
    expect(failureRangeOf(body)).toEqual({ shardId: "shardId-000000000003", start: "4958", end: "4961" });
  });

  it("throws on a body that is not one: the run stops rather than count a record kept that is not", () => {
    expect(() => failureRangeOf("not json")).toThrow(SyntaxError);
    expect(() => failureRangeOf("{}")).toThrow(TypeError);
  });
});
