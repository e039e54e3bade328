/** What npm start shows a person (issue 14, items 11 and 12, and the report): pure functions, no stack. */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { charts, renderReport } from "../../src/pipeline/report.js";
import { judgeRepresentative } from "../../src/pipeline/representative.js";
import type { Summary } from "../../src/pipeline/run-scenario.js";
import { countSlowRequests, explainSlowRequests } from "../../src/pipeline/slow-requests.js";
import { formatSummary, progressLine } from "../../src/pipeline/summary-format.js";
import { type Counters, Timeline } from "../../src/pipeline/timeline.js";

const summary: Summary = {
  environment: "dev",
  timeScale: 10,
  partialSplits: "split-free",
  durationMs: 41_200,
  phasesMs: { inputsIn: 600, accounted: 38_900, settled: 39_300, replayApplied: 40_900 },
  eventsIn: 2030,
  streamRecordsProcessed: 2880,
  jobsIn: 400,
  poisonJobs: 3,
  applied: 2435,
  scenarioEventsApplied: 1980,
  duplicatesSkipped: 482,
  quarantined: 19,
  retried: 31,
  bisected: 2,
  sentToDlq: 3,
  toFailureDestination: 15,
  quarantinedByDlqRedrive: 30,
  replayed: 30,
  lost: 0,
  timedOut: false,
  inFlight: 0,
  latencyMs: { p50: 40, p90: 120, p95: 180, p99: 900 },
  maxIteratorAgeMs: 5_300,
  processorDynamoDb: {
    byOperation: { BatchGetItem: 90, PutItem: 2_300 },
    requests: 2_390,
    refusedByFault: 12,
    firstDeliveries: 2_880,
    redeliveries: 150,
    requestsPerNewRecord: 2_390 / 2_880,
  },
  functions: {
    processor: { invocations: 120, errors: 4, timeouts: 1, coldStarts: 3, maxMemoryUsedMb: 80 },
    "tool-worker": { invocations: 90, errors: 0, timeouts: 0, coldStarts: 5, maxMemoryUsedMb: 60 },
  },
  missing: [],
  representativeness: { representative: true },
};

/** The run the issue saw on a busy machine (durations ÷10: the worker's 30 s timeout became 3 s). */
const overloaded: Summary = {
  ...summary,
  sentToDlq: 321,
  functions: {
    ...summary.functions,
    "tool-worker": { invocations: 150, errors: 149, timeouts: 149, coldStarts: 150, maxMemoryUsedMb: 60 },
  },
  representativeness: judgeRepresentative({
    timeScale: 10,
    functions: {
      processor: { invocations: 120, timeouts: 1, timeoutMs: 6_000, timeoutSeconds: 60 },
      "tool-worker": { invocations: 150, timeouts: 149, timeoutMs: 3_000, timeoutSeconds: 30 },
    },
    jobsIn: 400,
    poisonJobs: 3,
    sentToDlq: 321,
  }),
};

/** The local Kinesis ESM's event for one successful invocation of `records` records from `shardId`. */
const invoked = (shardId: string, records: number, iteratorAgeMs: number) =>
  ({ type: "invoked", shardId, records, outcome: "success", iteratorAgeMs }) as const;

const counters = (applied: number): Counters => ({
  applied,
  unreadable: 1,
  quarantineObjects: 2,
  dlq: 0,
  retried: 0,
  bisected: 0,
  invocations: { processor: applied },
  timeouts: { processor: 0 },
});

describe("the summary and the progress line", () => {
  it("explains every figure, as docs/local-runtime.md shows", () => {
    const text = formatSummary(summary);
    expect(text).toMatch(/unreadable quarantined\s+19\s+processor: stream records that can never be read/);
    expect(text).toMatch(/lost\s+0\s+inputs found nowhere/);
    expect(text).toMatch(/sent to DLQ\s+3\s+messages in the tool and FIFO DLQs/);
    expect(text).toMatch(
      /bisected\s+2\s+BisectBatchOnFunctionError splits: in halves after a function error, at the failed record after a partial answer/,
    );
    // Which accounting of a bisect-on partial split the run used: AWS does not say (§1.4).
    expect(text).toMatch(
      /Kinesis partial splits\s+split-free\s+bisect on: a partial answer's split uses no retry; AWS does not say which \(§1\.4\), --partial-split-accounting chooses/,
    );
    expect(formatSummary({ ...summary, partialSplits: "counts-attempt" })).toMatch(
      /Kinesis partial splits\s+counts-attempt\s+bisect on: a partial answer's split uses a retry/,
    );
    expect(formatSummary({ ...summary, partialSplits: null })).toMatch(
      /Kinesis partial splits\s+none\s+bisect or ReportBatchItemFailures off/,
    );
    expect(text).toMatch(/processor\s+120 invocations, 4 errors, 1 timeouts/);
    expect(text).toMatch(
      /processor DynamoDB requests\s+2390 \(0\.83 per new record\)\s+all of the processor's requests, pre-reads included, per stream record received for the first time \(2880; 150 redeliveries\)/,
    );
    // Where the duration went: the stages' ends, a stage not reached is left out.
    expect(text).toMatch(
      /duration\s+41\.2 s\s+inputs in 0\.6 s · all accounted for 38\.9 s · settled 39\.3 s · replay applied 40\.9 s/,
    );
    expect(formatSummary({ ...summary, phasesMs: { ...summary.phasesMs, replayApplied: null } })).toMatch(
      /settled 39\.3 s\n/,
    );
  });

  it("a run that ran out of time says so and is not reported as loss (exit 3, not 1)", () => {
    const out = formatSummary({
      ...summary,
      timedOut: true,
      inFlight: 12,
      missing: ["job c-1", "event c-2"],
    });
    expect(out).toMatch(/lost\s+not judged: timed out with 12 inputs in flight/);
    expect(out).not.toMatch(/lost\s+12/);
    const html = renderReport({
      summary: { ...summary, timedOut: true, inFlight: 12, missing: ["job c-1"] },
      timeline: new Timeline().data(),
      generatedAt: "2026-11-30T00:00:00Z",
    });
    expect(html).toContain("Timed out with 12 inputs still in flight: not judged (not loss");
    // Never a "0 lost" tile on a run that judged nothing.
    expect(html).toMatch(/<div class="value">not judged<\/div><div class="label">lost<\/div>/);
    expect(html).not.toMatch(/<div class="value">0<\/div><div class="label">lost<\/div>/);
    expect(html).toContain("<title>npm start: dev, not judged (timed out)</title>");
  });

  it("explains why applied exceeds events in: the workers' own lifecycle events", () => {
    expect(formatSummary(summary)).toMatch(
      /applied\s+2435\s+processor: events that changed the tool-calls table: the scenario's 1980 and 455 the workers published about their jobs \(started, completed\.\.\.\), hence more than events in/,
    );
  });

  it("a run whose timeouts dominate says it is not representative, why, and what to pass", () => {
    const text = formatSummary(overloaded);
    expect(text).toMatch(/lost\s+0\s+inputs found nowhere/);
    expect(text).toContain(
      "NOT REPRESENTATIVE: timeouts dominated this run, so its figures describe this machine's load, not the pipeline:",
    );
    expect(text).toContain("149 of 150 tool-worker invocations timed out at 3.0 s (its 30 s ÷ 10)");
    expect(text).toContain(
      "321 of 400 jobs ended in the DLQs, only 3 of them poison: the others failed every receive (timeouts)",
    );
    expect(text).toContain("pass --time-scale 2 (or --time-scale 1 for the real durations)");
    // A quiet run says nothing of the kind; one processor timeout in 120 does not dominate.
    expect(formatSummary(summary)).not.toContain("NOT REPRESENTATIVE");
    const html = renderReport({ summary: overloaded, timeline: new Timeline().data(), generatedAt: "now" });
    expect(html).toContain('id="representative"');
    expect(html).toContain("149 of 150 tool-worker invocations timed out");
    expect(html).not.toContain('class="verdict ok"');
    expect(html).toContain("<title>npm start: dev, lost 0, not representative</title>");
  });

  it("judges a run representative only below the thresholds, and at --time-scale 1 advises a quieter machine", () => {
    const base = { timeScale: 1, jobsIn: 100, poisonJobs: 2, sentToDlq: 2 };
    const load = (timeouts: number, invocations = 100) => ({
      f: { invocations, timeouts, timeoutMs: 30_000, timeoutSeconds: 30 },
    });
    expect(judgeRepresentative({ ...base, functions: load(19) }).representative).toBe(true);
    expect(judgeRepresentative({ ...base, functions: load(2, 2) }).representative).toBe(true);
    const busy = judgeRepresentative({ ...base, functions: load(20) });
    expect(busy).toMatchObject({ representative: false });
    expect(!busy.representative && busy.advice).toContain("run on a quieter machine, or with fewer inputs");
    expect(judgeRepresentative({ ...base, functions: load(0), sentToDlq: 12 }).representative).toBe(false);
  });

  it("names the quarantine bucket's objects apart from the processor's quarantine writes", () => {
    const line = progressLine({
      elapsedMs: 5_000,
      accounted: 10,
      expected: 20,
      applied: 8,
      quarantineObjects: 48,
      dlq: 1,
    });
    expect(line).toContain("quarantine objects 48");
    expect(line).not.toMatch(/quarantined/);
    expect(formatSummary(summary)).not.toMatch(/^quarantined\s/m);
  });
});

describe("npm's own warnings", () => {
  it("leaves no install script unreviewed, so npm ci prints no allowScripts warning (leveldown's is declined)", () => {
    const result = spawnSync("npm", ["install-scripts", "ls"], {
      cwd: join(import.meta.dirname, "../../../.."),
      encoding: "utf8",
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain("No packages with unreviewed install scripts.");
  }, 180_000);
});

describe("slow SDK requests", () => {
  it("are counted instead of printed, other warnings pass, and one line explains them", () => {
    const printed: unknown[] = [];
    const original = console.warn;
    console.warn = (...args: unknown[]) => printed.push(args[0]);
    try {
      const slow = countSlowRequests();
      console.warn(
        "@smithy/node-http-handler - [WARN] a request has exceeded the configured 5000 ms requestTimeout.",
      );
      console.warn("something else");
      slow.restore();
      expect(slow.count()).toBe(1);
      expect(printed).toEqual(["something else"]);
    } finally {
      console.warn = original;
    }
    expect(explainSlowRequests(0)).toBeUndefined();
    expect(explainSlowRequests(3)).toContain("3 AWS SDK request(s)");
  });
});

describe("the timeline", () => {
  it("turns the ESM's invocations into records per second and iterator age per shard, per interval", () => {
    const timeline = new Timeline(1_000, 0);
    timeline.onKinesisEvent(invoked("shard-0", 10, 300));
    timeline.onKinesisEvent(invoked("shard-0", 4, 900));
    timeline.sample(counters(14), 2_000);
    timeline.onKinesisEvent(invoked("shard-1", 5, 50));
    timeline.onKinesisEvent({ type: "bisected", shardId: "shard-1", records: 5 });
    timeline.sample(counters(19), 3_000);
    const data = timeline.data();
    expect(data.t).toEqual([2, 3]);
    expect(data.shards).toEqual([
      { shardId: "shard-0", recordsPerSecond: [7, 0], iteratorAgeMs: [900, null] },
      { shardId: "shard-1", recordsPerSecond: [0, 5], iteratorAgeMs: [null, 50] },
    ]);
    expect(data.counters.applied).toEqual([14, 19]);
  });
});

describe("the HTML report", () => {
  const timeline = new Timeline(1_000, 0);
  timeline.onKinesisEvent(invoked("shard-0", 3, 10));
  timeline.sample(counters(3), 1_000);

  it("is one self-contained file: uPlot inlined, no external script or stylesheet", () => {
    const html = renderReport({ summary, timeline: timeline.data(), generatedAt: "2026-11-30T00:00:00Z" });
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=/);
    expect(html).toContain("uPlot");
    expect(html).toContain("Ledger: lost 0");
  });

  it("cannot be broken by what the data holds (a missing id with </script>)", () => {
    const lost = { ...summary, lost: 1, missing: ["event </script><b>x"] };
    const html = renderReport({ summary: lost, timeline: timeline.data(), generatedAt: "now" });
    expect(html).toContain("Ledger: lost 1");
    expect(html).toContain("event &lt;/script&gt;&lt;b&gt;x");
    expect(html.match(/<\/script>/g)?.length).toBe(3);
  });

  it("charts throughput and iterator age per shard, outcomes and invocations per function", () => {
    const specs = charts(timeline.data());
    expect(specs.map((c) => c.id)).toEqual(["throughput", "iterator-age", "outcomes", "invocations"]);
    expect(specs[0]?.series).toEqual([{ label: "shard-0", values: [3] }]);
    expect(specs[3]?.series).toEqual([{ label: "processor", values: [3] }]);
  });
});
