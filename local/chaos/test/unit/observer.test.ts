import type { EnvironmentSettings } from "@mcp-pipeline/settings";
import { describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger.js";
import { observeOutcomes, sentRunsByCall } from "../../src/observer.js";

const WITNESS = "http://127.0.0.1:4000";
const sent = (path: string, at: number, origin = WITNESS) => ({
  requestId: "r-1",
  at,
  via: "fetch" as const,
  method: "POST",
  origin,
  path,
  idempotencyKey: `key-${path}`,
});

describe("the observer's record of which invocation sent each job's runs", () => {
  it("takes from an invocation's requests those to the witness's origin naming a job, decoded as the witness decodes them", () => {
    const byCall = sentRunsByCall(
      [
        sent("/effects/job-1-2", 10),
        sent("/effects/job%2D1-3?x=1", 11),
        sent("/effects/job-1-2", 12, "http://127.0.0.1:4566"),
        sent("/other/job-1-2", 13),
      ],
      WITNESS,
    );
    expect([...byCall.entries()]).toEqual([
      ["job-1-2", [{ at: 10, key: "key-/effects/job-1-2" }]],
      ["job-1-3", [{ at: 11, key: "key-/effects/job%2D1-3?x=1" }]],
    ]);
  });

  it("enters an invocation once for a job its batch holds twice, with the job's requests once", async () => {
    const ledger = new Ledger();
    const settings = {
      tool_worker: { timeout_seconds: 30, deadline_margin_ms: 2_000 },
      fifo_worker: { timeout_seconds: 30, deadline_margin_ms: 2_000 },
    } as unknown as EnvironmentSettings;
    const body = JSON.stringify({ callId: "job-1-2" });
    const invoke = observeOutcomes(
      ledger,
      settings,
      1,
      WITNESS,
    )("tool-worker", async () => ({
      kind: "ok",
      payload: "null",
      durationMs: 1,
      maxMemoryUsedMb: 1,
      requestId: "r-1",
      requests: [sent("/effects/job-1-2", Date.now())],
    }));
    await invoke({ Records: [{ body }, { body }] });
    expect(ledger.invocations("job-1-2")).toEqual([
      {
        from: expect.any(Number),
        at: expect.any(Number),
        requestId: "r-1",
        sent: [{ at: expect.any(Number), key: "key-/effects/job-1-2" }],
      },
    ]);
  });
});
