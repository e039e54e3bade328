import { describe, expect, it } from "vitest";
import { buildScenario, type ScenarioOptions, stuckRounds } from "../../src/pipeline/scenario.js";

const options: ScenarioOptions = {
  events: 2_000,
  jobs: 100,
  fifoJobs: 50,
  sessions: 8,
  poisonRate: 0.01,
  transientRate: 0.05,
  duplicateRate: 0.03,
  stuckRate: 0.02,
  stuckTwiceRate: 0.5,
  rejectRate: 0.05,
  seed: 5,
  lifecycle: true,
  downstream: true,
};
const decode = (data: Uint8Array) => JSON.parse(Buffer.from(data).toString("utf8"));

describe("the lifecycle scenario (the chaos run's workload)", () => {
  const scenario = buildScenario(options, Date.UTC(2026, 0, 1));
  const valid = scenario.stream.filter((s) => s.kind !== "poison");

  it("gives calls several events each, in the order they happened, interleaved with other calls and sessions", () => {
    const byCall = new Map<string, { type: string; occurredAt: string; key: string }[]>();
    for (const item of valid) {
      if (item.kind === "duplicate") continue;
      const event = decode(item.data);
      byCall.set(item.callId, [
        ...(byCall.get(item.callId) ?? []),
        { type: event.type, occurredAt: event.occurredAt, key: item.partitionKey },
      ]);
    }
    const lengths = [...byCall.values()].map((events) => events.length);
    expect(Math.max(...lengths)).toBe(4);
    expect(lengths.filter((n) => n >= 3).length).toBeGreaterThan(byCall.size / 3);
    for (const events of byCall.values()) {
      expect(events[0]?.type).toBe("tool_call.requested");
      expect(events.map((e) => e.occurredAt)).toEqual([...events.map((e) => e.occurredAt)].sort());
      expect(new Set(events.map((e) => e.key)).size).toBe(1);
    }
    // Interleaved: some call's events are not consecutive in the stream.
    const callIds = valid.map((s) => s.callId);
    expect(callIds.some((id, i) => i > 0 && id !== callIds[i - 1] && callIds.indexOf(id) < i - 1)).toBe(true);
  });

  it("sends a duplicate as the same bytes under the same key, a few records later", () => {
    const duplicates = valid.filter((s) => s.kind === "duplicate");
    expect(duplicates.length).toBeGreaterThan(0);
    for (const copy of duplicates) {
      const first = valid.find((s) => s.kind !== "duplicate" && s.eventId === copy.eventId);
      expect(first && Buffer.from(first.data).equals(Buffer.from(copy.data))).toBe(true);
      expect(scenario.stream.indexOf(copy)).toBeGreaterThan(scenario.stream.indexOf(first as never));
    }
  });

  it("announces each downstream job in the stream with its requested event, under its group's key", () => {
    const jobs = [...scenario.jobs, ...scenario.fifoJobs].filter((j) => j.kind === "job");
    for (const job of jobs) {
      const announced = valid.filter((s) => s.callId === job.callId);
      expect(announced.map((s) => s.type)).toEqual(expect.arrayContaining(["tool_call.requested"]));
      expect(announced.every((s) => s.partitionKey === job.group)).toBe(true);
      const body = JSON.parse(job.body);
      expect(body).toMatchObject({
        tool: "http.request",
        arguments: { path: `/effects/${job.callId}`, method: "POST" },
      });
      expect(Boolean(body.arguments.body.reject)).toBe(Boolean(job.rejected));
      expect(Boolean(body.arguments.body.failFirst)).toBe(job.transient);
    }
    expect(jobs.some((j) => j.rejected)).toBe(true);
  });

  it("names each stuck event's release round in its id, some only at the second replay", () => {
    const stuck = valid.filter((s) => s.kind === "stuck");
    expect(stuck.length).toBeGreaterThan(0);
    for (const item of stuck)
      expect(stuckRounds(JSON.stringify({ id: item.eventId }))).toEqual([item.releasedAtRound]);
    expect(new Set(stuck.map((s) => s.releasedAtRound))).toEqual(new Set([1, 2]));
  });

  it("leaves the default scenario as it was: one requested event per call, the load tools", () => {
    const plain = buildScenario({ ...options, lifecycle: false, downstream: false });
    expect(new Set(plain.stream.flatMap((s) => (s.kind === "poison" ? [] : [s.type])))).toEqual(
      new Set(["tool_call.requested"]),
    );
    expect(new Set(plain.jobs.filter((j) => j.kind === "job").map((j) => JSON.parse(j.body).tool))).toEqual(
      new Set(["text.stats", "load.latency"]),
    );
  });
});
