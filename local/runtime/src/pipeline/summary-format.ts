/** What npm start prints for a person: the progress line while it runs and the summary at the end. */
import { describePartialSplits } from "./partial-splits.js";
import type { Progress, RunPhases, Summary } from "./run-scenario.js";

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Where the run's time went: when each stage ended, from the first put. */
function phasesText(p: RunPhases): string {
  const stages: [string, number | null][] = [
    ["inputs in", p.inputsIn],
    ["all accounted for", p.accounted],
    ["settled", p.settled],
    ["replay applied", p.replayApplied],
  ];
  return stages
    .filter((stage): stage is [string, number] => stage[1] !== null)
    .map(([what, ms]) => `${what} ${seconds(ms)}`)
    .join(" · ");
}

/**
 * One row per figure, each with what it counts (docs/local-runtime.md, "The summary", shows the same).
 * "unreadable quarantined" counts the processor's quarantine writes; the progress line's "quarantine
 * objects" counts the bucket's objects, which also hold what dlq-redrive stored: two different things.
 */
export function formatSummary(s: Summary): string {
  const rows = [...inputRows(s), ...outcomeRows(s), ...verdictRows(s)];
  const width = Math.max(...rows.map(([k]) => k.length));
  const valueWidth = Math.max(...rows.map(([, v]) => v.length));
  const lines = rows.map(([k, v, why]) => `${k.padEnd(width)}  ${v.padEnd(valueWidth)}  ${why}`.trimEnd());
  lines.push("per function (invocations, errors, timeouts, cold starts, largest heap):");
  for (const [name, f] of Object.entries(s.functions)) {
    lines.push(
      `  ${name.padEnd(width - 2)}  ${f.invocations} invocations, ${f.errors} errors, ${f.timeouts} timeouts, ${f.coldStarts} cold starts, ${f.maxMemoryUsedMb} MB heap`,
    );
  }
  const rule = "-".repeat(Math.min(120, Math.max(...lines.map((l) => l.length))));
  const missing =
    s.missing.length > 0 ? `\nnot accounted for (first ${s.missing.length}): ${s.missing.join(", ")}` : "";
  return [rule, ...lines, rule].join("\n") + missing + notRepresentativeText(s);
}

/** A summary row: the figure's name, its value, and what it counts. */
type Row = [string, string, string];

/** The run's settings and what went in: events, records read, jobs, and what was applied. */
function inputRows(s: Summary): Row[] {
  const splits = describePartialSplits(s.partialSplits);
  return [
    ["environment", `${s.environment} (durations ÷${s.timeScale})`, ""],
    ["Kinesis partial splits", splits.value, splits.why],
    [
      "events in (stream)",
      String(s.eventsIn),
      "records the scenario put into the stream (duplicates and poison included)",
    ],
    [
      "stream records processed",
      String(s.streamRecordsProcessed),
      "records the processor's ESM read (the workers' own events included)",
    ],
    ["jobs in (queues)", String(s.jobsIn), "messages sent to the tool queue and the FIFO queue"],
    ["applied", String(s.applied), appliedText(s)],
  ];
}

/** Where the inputs went besides applied: skipped, quarantined, retried, dead-lettered, replayed. */
function outcomeRows(s: Summary): Row[] {
  return [
    [
      "duplicates skipped",
      String(s.duplicatesSkipped),
      "processor + workers: events or jobs already applied (retries, the workers' outcome events)",
    ],
    [
      "unreadable quarantined",
      String(s.quarantined),
      "processor: stream records that can never be read, written to the quarantine (at least once)",
    ],
    [
      "retried",
      String(s.retried),
      "Kinesis batch retries that used an attempt + SQS messages reported or failed by a function error",
    ],
    [
      "bisected",
      String(s.bisected),
      "BisectBatchOnFunctionError splits: in halves after a function error, at the failed record after a partial answer",
    ],
    [
      "sent to DLQ",
      String(s.sentToDlq),
      "messages in the tool and FIFO DLQs (poison, or maxReceiveCount reached)",
    ],
    [
      "to on-failure destination",
      String(s.toFailureDestination),
      "stream records handed to the failure queue (retries or record age exhausted)",
    ],
    [
      "stored by dlq-redrive",
      String(s.quarantinedByDlqRedrive),
      "records dlq-redrive re-read from the stream into the quarantine",
    ],
    [
      "replayed after recovery",
      String(s.replayed),
      "quarantined records put back into the stream once the fault stopped",
    ],
  ];
}

/** The ledger's verdict, then how fast and at what cost: latency, iterator age, requests, duration. */
function verdictRows(s: Summary): Row[] {
  return [
    s.timedOut
      ? [
          "lost",
          `not judged: timed out with ${s.inFlight} inputs in flight`,
          "raise --timeout: inputs still being retried are not lost",
        ]
      : [
          "lost",
          String(s.lost),
          "inputs found nowhere: not applied, quarantined, in a DLQ or the failure queue",
        ],
    [
      "latency p50 / p99",
      `${s.latencyMs.p50} ms / ${s.latencyMs.p99} ms`,
      "from a job's enqueue to its result in the table",
    ],
    ["max iterator age", `${s.maxIteratorAgeMs} ms`, "the oldest record's age when its batch was invoked"],
    [
      "processor DynamoDB requests",
      `${s.processorDynamoDb.requests} (${s.processorDynamoDb.requestsPerNewRecord.toFixed(2)} per new record)`,
      `all of the processor's requests, pre-reads included, per stream record received for the first time (${s.processorDynamoDb.firstDeliveries}; ${s.processorDynamoDb.redeliveries} redeliveries)`,
    ],
    ["duration", `${(s.durationMs / 1000).toFixed(1)} s`, phasesText(s.phasesMs)],
  ];
}

/**
 * Why "applied" exceeds "events in": the processor also applies the lifecycle events the workers publish
 * about their jobs, which reach it through the same stream.
 */
function appliedText(s: Summary): string {
  const workers = s.applied - s.scenarioEventsApplied;
  return workers > 0
    ? `processor: events that changed the tool-calls table: the scenario's ${s.scenarioEventsApplied} and ${workers} the workers published about their jobs (started, completed...), hence more than events in`
    : "processor: events that changed the tool-calls table";
}

/** The warning a run dominated by timeouts ends with: its figures describe the machine's load. */
export function notRepresentativeText(s: Summary): string {
  const r = s.representativeness;
  if (r.representative) return "";
  return [
    "",
    "NOT REPRESENTATIVE: timeouts dominated this run, so its figures describe this machine's load, not the pipeline:",
    ...r.why.map((line) => `  - ${line}`),
    `  ${r.advice}.`,
  ].join("\n");
}

export function progressLine(p: Progress): string {
  return `[${(p.elapsedMs / 1000).toFixed(1)}s] accounted ${p.accounted}/${p.expected} · applied ${p.applied} · quarantine objects ${p.quarantineObjects} · in DLQs ${p.dlq}`;
}
