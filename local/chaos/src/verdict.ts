/**
 * The verdict: each check judges the product by what the harness saw outside it (the doors' writes, the
 * witness's runs and effects, the table and the quarantine read after the run, the model of the oracle),
 * never by what a function reports of itself. local/chaos/README.md says what each check observes and
 * why the product cannot pass it by construction; test/sabotage.test.ts breaks the product on purpose and
 * sees each check fail.
 */

import { diagnose, type JobDiagnostics } from "./diagnostics.js";
import type { JobInput, Ledger, StreamInput } from "./ledger.js";
import { compareJobCall, compareStreamCall, expectedCall, type PutEvent, type TableItem } from "./oracle.js";
import { Tally } from "./tally.js";
import { type JobToJudge, judgeToolRuns, runSenders, type ToolRunVerdict } from "./tool-runs.js";
import type { WitnessEffect, WitnessRun } from "./witness.js";

export interface Check {
  readonly name: string;
  readonly pass: boolean;
  readonly detail: string;
}

export interface StallBounds {
  readonly partitionKeyMs: number;
  readonly groupMs: number;
}

/** What the run read after the pipeline stopped, round the doors. */
export interface FinalState {
  /** Every item of the tool-calls table, by callId. */
  readonly items: ReadonlyMap<string, TableItem>;
  /** The stored result of each finished job's call: its inline output, or the S3 object it points to. */
  readonly results: ReadonlyMap<string, string>;
  /** Sequence numbers of the records in the quarantine bucket. */
  readonly quarantined: ReadonlySet<string>;
}

/** What the witness saw (the downstream of the jobs' `http.request` tool). */
export interface WitnessView {
  runs(callId: string): readonly WitnessRun[];
  effects(callId: string): readonly WitnessEffect[];
}

export interface VerdictInput {
  readonly ledger: Ledger;
  readonly witness: WitnessView;
  readonly final: FinalState;
  readonly bounds: StallBounds;
  readonly timedOut: boolean;
  /**
   * When the run stopped waiting: an input delivered and still without its effect then has stalled its
   * key or group until then (a product that hides an input makes the run time out, and that is no excuse).
   */
  readonly endedAt?: number;
  /** A job whose diagnostics to keep whatever its runs (--explain), besides every job run more than once. */
  readonly explain?: string | undefined;
}

export interface Verdict {
  readonly checks: readonly Check[];
  readonly toolRuns: ToolRunVerdict;
  readonly oracleMismatches: number;
  readonly orderViolations: number;
  /** The diagnostics of every job run more than once, and of the job asked for (--explain). */
  readonly diagnostics: readonly JobDiagnostics[];
}

export const CheckName = {
  Accounted: "every input accounted for (applied, quarantined or in a DLQ)",
  Lost: "after replay, every valid input applied (lost = 0)",
  ToolEffects: "one tool effect per completed job, none per refused one (witness)",
  ToolRuns: "every second run of a tool has a cause (witness)",
  SameKey: "one idempotency key on every run of a job (witness)",
  Outcomes: "each job's result stored and its outcome published",
  Oracle: "every call's item as the oracle expects (status, events, version)",
  EffectOrder: "each call's events applied in put order (effects)",
  NoRegression: "no write went back on an earlier one (no lost update)",
  FifoOrder: "order per FIFO group (effects at the witness, §3)",
} as const;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The first copy of each valid event, in put order, per call. */
function eventsByCall(
  stream: readonly StreamInput[],
): Map<string, { input: StreamInput; event: PutEvent }[]> {
  const byCall = new Map<string, { input: StreamInput; event: PutEvent }[]>();
  const seen = new Set<string>();
  for (const input of stream) {
    const event = input.event;
    if (event === undefined || seen.has(event.eventId)) continue;
    seen.add(event.eventId);
    const list = byCall.get(event.callId) ?? [];
    list.push({ input, event });
    byCall.set(event.callId, list);
  }
  return byCall;
}

function oracleMismatches(input: VerdictInput, byCall: ReturnType<typeof eventsByCall>): Tally {
  const { ledger, final } = input;
  const out = new Tally(5);
  const jobs = new Map(ledger.jobs.flatMap((j) => (j.callId ? [[j.callId, j] as const] : [])));
  for (const [callId, events] of byCall) {
    const job = jobs.get(callId);
    const item = final.items.get(callId);
    const problems = job
      ? compareJobCall(
          {
            // From the job as it was sent: the downstream refuses it for good, or accepts it (a job that
            // fails first is retried). What the witness saw is judged by the tool-effect checks.
            status: job.rejected ? "failed" : "completed",
            requestedEventId: (events[0] as { event: PutEvent }).event.eventId,
            requestedAt: (events[0] as { event: PutEvent }).event.occurredAt,
          },
          item,
        )
      : compareStreamCall(expectedCall(events.map((e) => e.event)), item);
    if (problems.length) out.add(`${callId}: ${problems.join(", ")}`);
  }
  for (const callId of final.items.keys())
    if (!byCall.has(callId) && !jobs.has(callId)) out.add(`${callId}: an item no input asked for`);
  for (const callId of jobs.keys())
    if (!byCall.has(callId) && !final.items.has(callId)) out.add(`${callId}: no item`);
  return out;
}

/** A call's events applied out of put order, given-up records aside (a replay puts them back later). */
function orderViolations(ledger: Ledger, byCall: ReturnType<typeof eventsByCall>): Tally {
  const out = new Tally(3);
  for (const [callId, events] of byCall) {
    const order = ledger.effects.applicationOrder(callId);
    const position = new Map(order.map((id, i) => [id, i]));
    let last = -1;
    let lastId = "";
    for (const { input, event } of events) {
      if (ledger.givenUp(input)) continue;
      const at = position.get(event.eventId);
      if (at === undefined) continue;
      if (at < last) out.add(`${callId}: ${event.eventId} applied before ${lastId}, which was put before it`);
      if (at > last) [last, lastId] = [at, event.eventId];
    }
  }
  return out;
}

function outcomes(input: VerdictInput, validJobs: readonly JobInput[]): Tally {
  const { ledger, witness, final } = input;
  const out = new Tally(5);
  for (const job of validJobs) {
    const callId = job.callId as string;
    const effect = witness.effects(callId)[0];
    const want = job.rejected ? "tool_call.failed" : "tool_call.completed";
    const other = job.rejected ? "tool_call.completed" : "tool_call.failed";
    const published = ledger.published(callId);
    if (!published.has(want)) out.add(`${callId}: no ${want} published`);
    // The table keeps the first outcome; the stream's consumers saw every one published.
    if (published.has(other)) out.add(`${callId}: ${other} published as well`);
    if (effect && !(final.results.get(callId) ?? "").includes(JSON.stringify(effect.effectId)))
      out.add(`${callId}: the stored result is not the downstream's answer (${effect.effectId})`);
  }
  return out;
}

function fifoOrder(input: VerdictInput): Tally {
  const { ledger, witness } = input;
  const out = new Tally(3);
  const last = new Map<string, { ordinal: number; callId: string }>();
  ledger.jobs.forEach((j, index) => {
    if (!j.fifo || j.callId === undefined || ledger.jobDead(index)) return;
    const effect = witness.effects(j.callId)[0];
    if (effect === undefined) return;
    const before = last.get(j.group);
    if (before && effect.ordinal < before.ordinal)
      out.add(`${j.group}: ${j.callId} took effect before ${before.callId}, sent before it`);
    if (!before || effect.ordinal > before.ordinal)
      last.set(j.group, { ordinal: effect.ordinal, callId: j.callId });
  });
  return out;
}

/**
 * The longest a partition key or FIFO group held a delivered input without its effect. A key: from a
 * record's first delivery (or its replay's) to its effect; waiting in a backlog is not a stall (nothing
 * was delivered), retries of a failing batch are. A group: the time its job's message was held hidden,
 * summed over its receives, as the SQS front saw it (fifo-holds.ts); the time it waited visible for a
 * poller is a backlog. Records that left for the failure destination are bounded by the retries; a
 * group's holds are measured whatever became of its job.
 */
export function stalls(input: VerdictInput) {
  const { ledger, witness, endedAt } = input;
  const longest = () => ({ ms: 0, key: "", pending: false });
  const keep = (into: ReturnType<typeof longest>, key: string, ms: number, pending: boolean) => {
    if (ms > into.ms) Object.assign(into, { ms, key, pending });
  };
  const partitionKey = longest();
  for (const s of ledger.stream) {
    if (s.kind !== "event" || s.event === undefined || ledger.givenUp(s)) continue;
    const delivered = ledger.deliveredAt(s.sequenceNumber);
    const applied = ledger.effects.appliedAt(s.event.eventId);
    // Until its effect, or to the end of the run for a delivered input still without its effect.
    const until = applied ?? endedAt;
    if (delivered !== undefined && until !== undefined)
      keep(partitionKey, s.key, until - delivered, applied === undefined);
  }
  // A replayed record holds its key as a produced one does (faults stay on during the replay); it is not in
  // ledger.stream, and the record it replays, given up, is exempt above.
  const keyOfEvent = new Map(
    ledger.stream.flatMap((s) => (s.event ? [[s.event.eventId, s.key] as const] : [])),
  );
  for (const r of ledger.replayDeliveries()) {
    // Only the run's own inputs are judged, as above: a worker's published event (started, completed) may
    // be given up and replayed too, and folding it into an item the worker already wrote changes nothing,
    // so it has no effect to wait for (100,000 events, seed 42: 696.1 s "still without its effect", no key).
    const key = keyOfEvent.get(r.eventId);
    if (key === undefined) continue;
    const applied = ledger.effects.appliedAt(r.eventId);
    const until = applied ?? endedAt;
    if (until !== undefined) keep(partitionKey, key, until - r.at, applied === undefined);
  }
  const group = longest();
  /** Delivered jobs of which the SQS front saw no receive: the measure saw nothing of them. */
  const unseen: string[] = [];
  /** The messages measured as a job's below; any other the front saw received is measured after them. */
  const measured = new Set<string>();
  ledger.jobs.forEach((j, index) => {
    // Every job's holds count, whatever became of it: a message in flight holds its group (§3) whether the
    // downstream refuses its job or it goes on to a DLQ, and maxReceiveCount bounds its receives, not how
    // long each hides (a ChangeMessageVisibility stretches it, §2.6). A job sent back from a DLQ is the
    // same call with a new message, measured as well.
    if (!j.fifo) return;
    if (j.callId === undefined) {
      // A poison message names no call, so no delivery of it is known; its holds, if the front saw any,
      // held its group as any message's do.
      const held = ledger.holds.heldMessages(j.messageIds, endedAt);
      for (const id of j.messageIds) measured.add(id);
      if (held !== undefined) keep(group, j.group, held.ms, false);
      return;
    }
    if (ledger.jobDeliveredAt(j.callId) === undefined) return;
    for (const id of ledger.holds.messagesOf(j.callId)) measured.add(id);
    const held = ledger.holds.held(j.callId, endedAt);
    // A refused job has no effect ever, nor has one that stayed in a DLQ: neither waits for one.
    const waiting = !j.rejected && !ledger.jobDead(index) && witness.effects(j.callId).length === 0;
    if (held === undefined) unseen.push(j.callId);
    else keep(group, j.group, held.ms, waiting);
  });
  // A message that is no delivered job's (one a product sent into a group itself, with a body of its own)
  // holds its group in flight as a job's does, and the jobs behind it wait before any receive of theirs.
  const other = ledger.holds.longestOther(measured, endedAt);
  if (other !== undefined) keep(group, `message ${other.messageId}, of no delivered job`, other.ms, false);
  return { partitionKey, group: { ...group, unseen } };
}

/** Each job as the witness and the ledger saw it, for the tool-run judgement and the diagnostics. */
function jobsAsSeen(input: VerdictInput, validJobs: readonly JobInput[]) {
  const { ledger, witness } = input;
  return validJobs.map((j) => ({
    callId: j.callId as string,
    rejected: j.rejected,
    runs: witness.runs(j.callId as string),
    effects: witness.effects(j.callId as string),
    incidents: ledger.incidents(j.callId as string),
    invocations: ledger.invocations(j.callId as string),
    storedAt: ledger.effects.finishedAt(j.callId as string),
  }));
}

/** Whether the records name one invocation as the sender of each of the job's runs. */
const senderAlone = (job: JobToJudge) =>
  runSenders(job).every((s) => s.known === "recorded" && s.invocations.length === 1);

/** `${count}: ${examples}` when there are any: the shape of every tally in a detail. */
const counted = (tally: { count: number; describe(): string }) =>
  `${tally.count}${tally.count ? `: ${tally.describe()}` : ""}`;

/** A run out of time has not reached its end state: what only the end state shows is not judged. */
function atEndOf(timedOut: boolean) {
  return (check: Omit<Check, "pass">, pass: boolean): Check =>
    timedOut
      ? { name: check.name, pass: true, detail: `not judged: timed out (${check.detail})` }
      : { ...check, pass };
}

/** Every input accounted for, and every valid one applied: the end state's promises. */
function inputChecks(input: VerdictInput): Check[] {
  const { ledger } = input;
  const atEnd = atEndOf(input.timedOut);
  const unsettled = ledger.unsettled(5);
  const unapplied = ledger.unapplied(5);
  return [
    atEnd(
      {
        name: CheckName.Accounted,
        detail: `${ledger.stream.length} records, ${ledger.counts().jobMessages} messages; unaccounted ${counted(unsettled)}`,
      },
      unsettled.count === 0,
    ),
    atEnd({ name: CheckName.Lost, detail: `lost ${counted(unapplied)}` }, unapplied.count === 0),
  ];
}

/** What the witness saw of the jobs' tool runs: their effects, their second runs' causes, their keys. */
function toolChecks(input: VerdictInput, toolRuns: ToolRunVerdict, jobs: number): Check[] {
  // More effects than one is wrong at any time; fewer only once the run has ended.
  const tooMany = toolRuns.wrongEffects.names.some((n) => !/: 0 effects/.test(n));
  const causes = Object.entries(toolRuns.causes)
    .filter(([, n]) => n > 0)
    .map(([cause, n]) => `${n} ${cause}`)
    .join(", ");
  return [
    input.timedOut && !tooMany
      ? {
          name: CheckName.ToolEffects,
          pass: true,
          detail: "not judged: timed out (no job had more than one effect)",
        }
      : {
          name: CheckName.ToolEffects,
          pass: toolRuns.wrongEffects.count === 0,
          detail: `${jobs} jobs; wrong ${counted(toolRuns.wrongEffects)}`,
        },
    {
      name: CheckName.ToolRuns,
      pass: toolRuns.unexplained.count === 0,
      // How each run's sender was known: the sandboxes' records, or, for a run none pairs with, the times.
      detail: `${toolRuns.runs} runs, at most ${toolRuns.maxRuns} per job; ${toolRuns.rerun} jobs run more than once${causes ? ` (${causes})` : ""}; without a cause ${counted(toolRuns.unexplained)}; senders recorded ${toolRuns.senders.recorded} (${toolRuns.senders.ambiguous} of two or more invocations), inferred ${toolRuns.senders.inferred}`,
    },
    {
      name: CheckName.SameKey,
      pass: toolRuns.keyProblems.count === 0,
      detail: toolRuns.keyProblems.count
        ? `${toolRuns.keyProblems.count} jobs: ${toolRuns.keyProblems.describe()}`
        : "yes",
    },
  ];
}

/** Each job's outcome and each call's item, against what was sent: the end state again. */
function resultChecks(input: VerdictInput, validJobs: readonly JobInput[], mismatches: Tally): Check[] {
  const atEnd = atEndOf(input.timedOut);
  const published = outcomes(input, validJobs);
  return [
    atEnd(
      {
        name: CheckName.Outcomes,
        detail: published.count ? `${published.count}: ${published.describe()}` : `${validJobs.length} jobs`,
      },
      published.count === 0,
    ),
    atEnd(
      {
        name: CheckName.Oracle,
        detail: `${input.final.items.size} items; mismatches ${counted(mismatches)}`,
      },
      mismatches.count === 0,
    ),
  ];
}

/** Order at any time: each call's events in put order, no write going back, each FIFO group in send order. */
function orderChecks(input: VerdictInput, order: Tally): Check[] {
  const { ledger } = input;
  const regressions = ledger.effects.regressions(3);
  const groups = fifoOrder(input);
  return [
    {
      name: CheckName.EffectOrder,
      pass: order.count === 0,
      detail: `violations ${counted(order)}`,
    },
    {
      name: CheckName.NoRegression,
      pass: regressions.count === 0,
      detail: regressions.count
        ? `${regressions.count}: ${regressions.examples.map((r) => `${r.callId} v${r.version} ${r.problem}`).join("; ")}`
        : `${ledger.effects.calls} calls written`,
    },
    {
      name: CheckName.FifoOrder,
      pass: groups.count === 0,
      detail: groups.count
        ? `${groups.count} out of order; ${groups.describe()}`
        : "every group's jobs took effect in send order (DLQ'd ones exempt)",
    },
  ];
}

/** The longest stall of a key and of a group, against their bounds. */
function stallChecks(input: VerdictInput): Check[] {
  const { bounds } = input;
  const stall = stalls(input);
  return [
    {
      name: `no partition key stalled over ${seconds(bounds.partitionKeyMs)}`,
      pass: stall.partitionKey.ms <= bounds.partitionKeyMs,
      detail: `longest: ${seconds(stall.partitionKey.ms)}${stall.partitionKey.key ? ` (${stall.partitionKey.key})` : ""}${stall.partitionKey.pending ? ", still without its effect" : ""}`,
    },
    {
      name: `no FIFO group stalled over ${seconds(bounds.groupMs)}`,
      pass: stall.group.ms <= bounds.groupMs && stall.group.unseen.length === 0,
      detail: `longest: ${seconds(stall.group.ms)}${stall.group.key ? ` (${stall.group.key})` : ""}${stall.group.pending ? ", still without its effect" : ""}${
        stall.group.unseen.length > 0
          ? `; the SQS front saw no receive of ${stall.group.unseen.length} delivered job${stall.group.unseen.length === 1 ? "" : "s"} (${stall.group.unseen.slice(0, 3).join(", ")})`
          : ""
      }`,
    },
  ];
}

export function judge(input: VerdictInput): Verdict {
  const { ledger } = input;
  const byCall = eventsByCall(ledger.stream);
  const validJobs = ledger.jobs.filter((j) => j.callId !== undefined);
  const jobsToJudge = jobsAsSeen(input, validJobs);
  const toolRuns = judgeToolRuns(jobsToJudge);
  // Jobs run more than once, and any whose run's sender the sandboxes' records did not tell alone (inferred
  // from the times, or paired with the requests of two or more invocations): those show why in the file.
  const diagnostics = jobsToJudge
    .filter((j) => j.runs.length > 1 || j.callId === input.explain || !senderAlone(j))
    .map(diagnose);
  const mismatches = oracleMismatches(input, byCall);
  const order = orderViolations(ledger, byCall);
  const checks: Check[] = [
    ...inputChecks(input),
    ...toolChecks(input, toolRuns, validJobs.length),
    ...resultChecks(input, validJobs, mismatches),
    ...orderChecks(input, order),
    ...stallChecks(input),
  ];
  return {
    checks,
    toolRuns,
    oracleMismatches: mismatches.count,
    orderViolations: order.count,
    diagnostics,
  };
}
