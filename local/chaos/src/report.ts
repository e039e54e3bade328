/** The verdict as people read it (a pass/fail table) and as machines do (one JSON object). */
import { describePartialSplits } from "@mcp-pipeline/local-runtime";
import { type ChaosResult, type RunPhases, RunVerdict, verdictOf } from "./run.js";
import { TimeoutCause } from "./watchdog.js";

const pad = (text: string, width: number) => text + " ".repeat(Math.max(0, width - text.length));

function timeoutReason(result: ChaosResult): string {
  const timeout = result.timeout;
  if (!timeout) return "deadline";
  const quiet = `${(timeout.quietMs / 1000).toFixed(0)} s`;
  return timeout.cause === TimeoutCause.NoProgress
    ? `nothing moved for ${quiet}: stuck, not slow`
    : `deadline; nothing moved for the last ${quiet}`;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Where the run's wall time went: what to look at first when a proof at scale is slow. */
function timeLine(phases: RunPhases): string {
  const rounds = phases.rounds.map(
    (r, n) =>
      `round ${n + 1}: quarantine ${seconds(r.quarantineMs)}, replay ${seconds(r.replayMs)}, settle ${seconds(r.settleMs)}`,
  );
  const recoveryMs = phases.rounds.reduce((t, r) => t + r.quarantineMs + r.replayMs + r.settleMs, 0);
  const recovery =
    rounds.length === 0 ? "no recovery" : `recovery ${seconds(recoveryMs)} (${rounds.join("; ")})`;
  return `time: start ${seconds(phases.startMs)}, production ${seconds(phases.productionMs)}, settle ${seconds(phases.settleMs)}, ${recovery}, end state and verdict ${seconds(phases.judgeMs)}`;
}

export function formatTable(result: ChaosResult): string {
  const width = Math.max(...result.checks.map((c) => c.name.length));
  const f = result.faults;
  const c = result.counts;
  const p = result.proof;
  const splits = describePartialSplits(result.partialSplits);
  const lines = [
    `chaos run, seed ${result.seed}: ${(result.durationMs / 1000).toFixed(1)} s${result.timedOut ? `, TIMED OUT (${timeoutReason(result)})` : ""}`,
    `kinesis: partial splits ${splits.value} (${splits.why})`,
    `inputs: ${c.streamRecords} stream records (${c.streamKinds.event} events of ${c.calls} calls, ${c.streamKinds.stuck} stuck, ${c.streamKinds.duplicate} sent twice, ${c.streamKinds.poison} poison), ${c.jobMessages} job messages (${c.jobs} jobs, ${c.poisonJobs} poison)`,
    `faults: ${f.throttles} throttles, ${f.exceptions} handler exceptions, ${f.timeouts} timeouts, ${f.dynamodbFaults} DynamoDB throttles/5xx, ${f.dynamodbAfterWriteFaults} DynamoDB 5xx after the write, ${f.s3Faults} S3 503/500, ${f.stuckWriteRefusals} stuck-write refusals, ${f.emulatorErrors} emulator errors (not injected); SQS down ${f.sqsDownMs} ms (${f.sqsRefusedConnections} connections refused)`,
    `recovery: ${c.quarantineObjects} quarantine objects, ${c.failureRanges} failure records, ${c.deadLettered} DLQ messages; ${p.replayRounds} rounds replayed ${f.replayedRecords} records and ${f.redrivenJobs} jobs, with ${p.replayPhaseFaults} faults; ${p.givenUpAgainAfterReplay} records given up again after their replay`,
    `proof: tool runs ${p.toolRuns} (at most ${p.maxRunsPerJob} per job, ${p.jobsRunMoreThanOnce} jobs more than once), witness effects ${p.witnessEffects}; oracle mismatches ${p.oracleMismatches}; effect-order violations ${p.effectOrderViolations}`,
    timeLine(result.phases),
    "",
    `${pad("check", width)}  result  detail`,
    ...result.checks.map(
      (check) => `${pad(check.name, width)}  ${check.pass ? "pass  " : "FAIL  "}  ${check.detail}`,
    ),
  ];
  if (result.timedOut)
    lines.push("", `timed out: still in flight (not lost): ${result.inFlight.join("; ") || "nothing named"}`);
  const verdict = verdictOf(result);
  lines.push(
    "",
    verdict === RunVerdict.TimedOut
      ? "verdict: timed out"
      : verdict === RunVerdict.Pass
        ? "verdict: pass"
        : `verdict: FAIL${result.timedOut ? " (and timed out: what only the end shows was not judged)" : ""}`,
  );
  return lines.join("\n");
}

/** The result as one JSON object; the per-job diagnostics are --diagnostics' (a file), not the summary's. */
export function formatJson(result: ChaosResult): string {
  const { diagnostics: _diagnostics, ...summary } = result;
  return JSON.stringify(summary);
}
