/**
 * The HTML report of a run (`npm start`, `--report FILE`): the ledger's verdict, the summary's figures,
 * and charts over time drawn by uPlot (MIT, inlined with its stylesheet so the file opens offline).
 * renderReport is pure: the same summary and timeline give the same page.
 */
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import type { Summary } from "./run-scenario.js";
import type { TimelineData } from "./timeline.js";

const require = createRequire(import.meta.url);
const uplotDir = dirname(require.resolve("uplot/package.json"));

/** Colour-blind-safe (Okabe-Ito), in the order the series get them. */
export const PALETTE = [
  "#0072B2",
  "#E69F00",
  "#009E73",
  "#D55E00",
  "#CC79A7",
  "#56B4E9",
  "#000000",
  "#F0E442",
];

export interface ReportInput {
  readonly summary: Summary;
  readonly timeline: TimelineData;
  readonly generatedAt: string;
}

interface ChartSpec {
  readonly id: string;
  readonly title: string;
  readonly explain: string;
  readonly yLabel: string;
  readonly series: readonly { readonly label: string; readonly values: readonly (number | null)[] }[];
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string,
  );
}

/** JSON that cannot close the <script> element it sits in. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c");
}

export function charts(timeline: TimelineData): ChartSpec[] {
  const c = timeline.counters;
  const perFunction = (table: readonly Readonly<Record<string, number>>[] | undefined) => {
    const names = [...new Set((table ?? []).flatMap((row) => Object.keys(row)))].sort();
    return names.map((name) => ({ label: name, values: (table ?? []).map((row) => row[name] ?? 0) }));
  };
  return [
    {
      id: "throughput",
      title: "Stream throughput per shard",
      explain: "records the Kinesis ESM delivered to the processor per second (retries included)",
      yLabel: "records / s",
      series: timeline.shards.map((s) => ({ label: s.shardId, values: s.recordsPerSecond })),
    },
    {
      id: "iterator-age",
      title: "Iterator age per shard",
      explain: "age of the oldest record in the batches invoked in each second: how far the processor lags",
      yLabel: "ms",
      series: timeline.shards.map((s) => ({ label: s.shardId, values: s.iteratorAgeMs })),
    },
    {
      id: "outcomes",
      title: "Where the inputs went (running totals)",
      explain:
        "applied events; unreadable records quarantined by the processor; objects in the quarantine bucket; messages in the DLQs; retries; bisections",
      yLabel: "count",
      series: [
        { label: "applied", values: c.applied ?? [] },
        { label: "unreadable quarantined", values: c.unreadable ?? [] },
        { label: "quarantine objects", values: c.quarantineObjects ?? [] },
        { label: "in DLQs", values: c.dlq ?? [] },
        { label: "retried", values: c.retried ?? [] },
        { label: "bisected", values: c.bisected ?? [] },
      ],
    },
    {
      id: "invocations",
      title: "Invocations per function (running totals)",
      explain: "each function's invocations; its timeouts are in the table below",
      yLabel: "invocations",
      series: perFunction(c.invocations),
    },
  ];
}

function figure(label: string, value: string, note: string): string {
  return `<div class="figure"><div class="value">${escapeHtml(value)}</div><div class="label">${escapeHtml(label)}</div><div class="note">${escapeHtml(note)}</div></div>`;
}

export function renderReport({ summary: s, timeline, generatedAt }: ReportInput): string {
  const css = readFileSync(`${uplotDir}/dist/uPlot.min.css`, "utf8");
  const js = readFileSync(`${uplotDir}/dist/uPlot.iife.min.js`, "utf8");
  const specs = charts(timeline).map((spec) => ({
    ...spec,
    colors: spec.series.map((_, i) => PALETTE[i % PALETTE.length] as string),
  }));
  const r = s.representativeness;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>npm start: ${escapeHtml(s.environment)}, ${s.timedOut ? "not judged (timed out)" : `lost ${s.lost}`}${r.representative ? "" : ", not representative"}</title>
<style>${css}</style>
${PAGE_STYLE}
</head>
<body>
<h1>npm start: environment ${escapeHtml(s.environment)}</h1>
<div class="meta">durations ÷${s.timeScale} · ran ${(s.durationMs / 1000).toFixed(1)} s · generated ${escapeHtml(generatedAt)}</div>
${verdictHtml(s)}
${unrepresentativeHtml(r)}
<div class="figures">
${figuresHtml(s)}
</div>
<div class="grid">
${chartSections(specs)}
<section class="chart-box"><h2>Latency percentiles (job → result)</h2><p class="explain">from a job's enqueue to its result in the tool-calls table</p><div id="latency">${latencyBars(s)}</div>${latencyNote(s)}</section>
<section class="chart-box"><h2>Functions</h2><p class="explain">invocations, function errors, timeouts (Sandbox.Timedout), cold starts, largest heap</p>
<table id="functions"><thead><tr><th>function</th><th>invocations</th><th>errors</th><th>timeouts</th><th>cold starts</th><th>heap</th></tr></thead><tbody>${functionRows(s)}</tbody></table></section>
</div>
<script id="report-data" type="application/json">${scriptJson({ t: timeline.t, charts: specs })}</script>
<script>${js}</script>
${CHART_SCRIPT}
</body>
</html>
`;
}

/** The page's own stylesheet (uPlot's is inlined before it). */
const PAGE_STYLE = `<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 20px 28px; color: #1a1a1a; background: #fff; }
  h1 { font-size: 22px; margin: 0 0 4px; }
  h2 { font-size: 16px; margin: 0 0 2px; }
  .meta { color: #555; margin-bottom: 12px; }
  .verdict { font-size: 17px; font-weight: 600; padding: 10px 14px; border-radius: 6px; margin-bottom: 14px; }
  .verdict.ok { background: #e3f4ea; color: #11532d; border: 1px solid #7cc59a; }
  .verdict.lost { background: #fde7e4; color: #7a1b0c; border: 1px solid #e08b7c; }
  .verdict.warn { background: #fff4d6; color: #6b4a00; border: 1px solid #e0b84c; }
  .verdict.warn p, .verdict.warn ul { margin: 4px 0; }
  .figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 8px; margin-bottom: 16px; }
  .figure { border: 1px solid #ddd; border-radius: 6px; padding: 8px 10px; }
  .figure .value { font-size: 22px; font-weight: 600; }
  .figure .label { font-weight: 600; }
  .figure .note { color: #666; font-size: 12px; }
  .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(600px, 1fr)); gap: 16px; }
  .chart-box { border: 1px solid #ddd; border-radius: 6px; padding: 10px; }
  .explain { color: #555; margin: 0 0 6px; font-size: 13px; }
  .bar-row { display: flex; align-items: center; gap: 8px; margin: 6px 0; }
  .bar-label { width: 36px; font-weight: 600; }
  .bar { display: inline-block; height: 18px; background: #0072B2; border-radius: 3px; min-width: 2px; max-width: 70%; }
  .bar-value { color: #333; }
  table { border-collapse: collapse; }
  th, td { border-bottom: 1px solid #e3e3e3; padding: 4px 12px 4px 0; text-align: right; }
  th:first-child, td:first-child { text-align: left; }
  td.warn { color: #b3400a; font-weight: 600; }
</style>`;

/** Draws each chart from the report's data with the inlined uPlot; `window.reportCharts` for the browser test. */
const CHART_SCRIPT = `<script>
  const data = JSON.parse(document.getElementById("report-data").textContent);
  window.reportCharts = {};
  for (const spec of data.charts) {
    const el = document.getElementById("chart-" + spec.id);
    const opts = {
      width: Math.max(560, el.clientWidth),
      height: 260,
      scales: { x: { time: false } },
      legend: { live: false },
      series: [{ label: "s" }].concat(spec.series.map((s, i) => ({
        label: s.label, stroke: spec.colors[i], width: 2, spanGaps: true, points: { show: false },
      }))),
      axes: [{ label: "seconds since start" }, { label: spec.yLabel, size: 60 }],
    };
    window.reportCharts[spec.id] = new uPlot(opts, [data.t].concat(spec.series.map((s) => s.values)), el);
  }
</script>`;

/** The ledger's verdict: timed out (not judged), lost 0, or what was found nowhere. */
function verdictHtml(s: Summary): string {
  const r = s.representativeness;
  return s.timedOut
    ? `<div class="verdict warn" id="verdict">Timed out with ${s.inFlight} inputs still in flight: not judged (not loss; raise --timeout). Still in flight: ${escapeHtml(s.missing.join(", "))}</div>`
    : s.lost === 0
      ? `<div class="verdict ${r.representative ? "ok" : "warn"}" id="verdict">Ledger: lost 0. Every input is accounted for: applied, quarantined, in a DLQ or in the failure queue.</div>`
      : `<div class="verdict lost" id="verdict">Ledger: lost ${s.lost}. Not found anywhere: ${escapeHtml(s.missing.join(", "))}</div>`;
}

/** Why a run whose timeouts dominated is not representative, and what to pass; empty for one that is. */
function unrepresentativeHtml(r: Summary["representativeness"]): string {
  return r.representative
    ? ""
    : `<div class="verdict warn" id="representative"><p>Not representative: timeouts dominated this run, so its figures describe this machine's load, not the pipeline.</p><ul>${r.why.map((line) => `<li>${escapeHtml(line)}</li>`).join("")}</ul><p>${escapeHtml(r.advice)}.</p></div>`;
}

function figuresHtml(s: Summary): string {
  return `${figure("events in", String(s.eventsIn), "put into the stream")}
${figure("jobs in", String(s.jobsIn), "sent to the queues")}
${figure("applied", String(s.applied), `the scenario's ${s.scenarioEventsApplied} events and the workers' own`)}
${figure("unreadable quarantined", String(s.quarantined), "by the processor, at least once")}
${figure("in DLQs", String(s.sentToDlq), "tool and FIFO DLQs")}
${figure("to failure queue", String(s.toFailureDestination), "records the ESM gave up on")}
${figure("replayed", String(s.replayed), "after the fault stopped")}
${figure("retried / bisected", `${s.retried} / ${s.bisected}`, "batch retries / splits")}
${figure("max iterator age", `${s.maxIteratorAgeMs} ms`, "oldest record at invoke")}
${s.timedOut ? figure("lost", "not judged", `timed out with ${s.inFlight} inputs in flight`) : figure("lost", String(s.lost), "found nowhere")}`;
}

function chartSections(specs: readonly (ChartSpec & { readonly colors: readonly string[] })[]): string {
  return specs
    .map(
      (spec) =>
        `<section class="chart-box"><h2>${escapeHtml(spec.title)}</h2><p class="explain">${escapeHtml(spec.explain)}</p><div class="chart" id="chart-${spec.id}" data-colors="${spec.colors.join(",")}"></div></section>`,
    )
    .join("");
}

/** One bar per percentile, as wide as its share of the slowest. */
function latencyBars(s: Summary): string {
  const latency = (["p50", "p90", "p95", "p99"] as const).map((p) => [p, s.latencyMs[p] ?? 0] as const);
  const slowest = Math.max(1, ...latency.map(([, v]) => v));
  return latency
    .map(
      ([p, v]) =>
        `<div class="bar-row"><span class="bar-label">${p}</span><span class="bar" data-ms="${v}" style="width:${((v / slowest) * 100).toFixed(1)}%"></span><span class="bar-value">${v} ms</span></div>`,
    )
    .join("");
}

function latencyNote(s: Summary): string {
  return s.latencyMs.p99 === 0
    ? `<p class="explain" id="latency-note">no job reached a result in the table</p>`
    : "";
}

function functionRows(s: Summary): string {
  return Object.entries(s.functions)
    .map(
      ([name, f]) =>
        `<tr><td>${escapeHtml(name)}</td><td>${f.invocations}</td><td>${f.errors}</td><td class="${f.timeouts > 0 ? "warn" : ""}">${f.timeouts}</td><td>${f.coldStarts}</td><td>${f.maxMemoryUsedMb} MB</td></tr>`,
    )
    .join("");
}

export async function writeReport(file: string, input: ReportInput): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, renderReport(input));
}
