/**
 * Recovery, as an operator does it (docs/operations.md), with the faults still on: the failure records in
 * the failure queue's DLQ go back to the failure queue, the run waits until dlq-redrive has stored every
 * given-up record in the quarantine, the quarantine's given-up records are replayed into the stream
 * (through the S3 door: the replay meets S3's errors and is run again, as its marks allow), and the valid
 * jobs in the DLQs go back to their queues. Then the run waits for what it put back. A record given up
 * again after its replay (a stuck event released only at the second round, or one that met the faults
 * again) is quarantined again and replayed by the next round; so is a job dead-lettered again.
 */
import { listGivenUp } from "@mcp-pipeline/local-runtime";
import type { ReplaySummary, replayQuarantine } from "@mcp-pipeline/recovery";
import { failureRangeOf } from "./failure-range.js";
import type { Harness } from "./harness.js";
import { type Ledger, Phase } from "./ledger.js";
import { runAgainWhileRefused } from "./operator-retry.js";
import { sendInTens, sendJobs } from "./produce.js";
import { type RunClock, Settled, settle } from "./settle.js";

/** The operator's replay: what a sabotage test replaces to see the lost-input check fail. */
export type Replay = typeof replayQuarantine;

export interface Recovery {
  readonly rounds: number;
  readonly replayedRecords: number;
  readonly redrivenJobs: number;
  /** How the last wait ended. */
  readonly settled: Settled;
  /** Each round's wall time, in its steps: where a run's recovery spends it (the run's `phases`). */
  readonly roundTimes: readonly RoundTimes[];
}

/** One recovery round's wall time (ms), step by step. */
export interface RoundTimes {
  /** Until every given-up record was in the quarantine (with the failure queue's DLQ redriven). */
  readonly quarantineMs: number;
  /** The replay (listing the quarantine, putting its records back, marking them) and the jobs' redrive. */
  readonly replayMs: number;
  /** Until what was put back was applied, or the pipeline idle. */
  readonly settleMs: number;
}

/** How often a long replay says how far it is. */
const PROGRESS_EVERY_MS = 5_000;

/** The most rounds a run makes: stuck events need two, and a round's faults rarely give up on anything. */
export const MAX_ROUNDS = 5;

/** Failure records back to the failure queue (a redrive makes new messages, §4); retried while SQS is down. */
async function redriveFailureRecords(
  harness: Harness,
  ledger: Ledger,
  redriven: Set<string>,
): Promise<number> {
  const records = [...ledger.dead].filter(
    ([id, m]) =>
      m.queue === "stream" &&
      !redriven.has(id) &&
      // One that dlq-redrive set aside itself (not a readable failure record) would only come back.
      m.attributes["pipeline.reason.code"] === undefined &&
      failureRangeOf(m.body) !== undefined,
  );
  if (records.length === 0) return 0;
  // A batch retried whole may send a failure record twice: dlq-redrive stores only what is absent.
  await sendInTens(
    harness.pipeline.sqs,
    harness.pipeline.queues.streamFailures.url,
    records.map(([, m]) => ({ MessageBody: m.body })),
    "retry",
  );
  for (const [id] of records) redriven.add(id);
  return records.length;
}

/**
 * The replay, run again while S3 refuses it for the moment (its marks make it resume), as long as the run
 * is moving; 0 when the run ran out of time meanwhile (the next wait says so).
 */
async function replayGivenUp(
  harness: Harness,
  ledger: Ledger,
  replay: Replay,
  clock: RunClock,
): Promise<number> {
  const { pipeline } = harness;
  const replayed = await runAgainWhileRefused(
    async () => {
      const givenUp = await listGivenUp(harness.s3ThroughDoor, pipeline.names.quarantineBucket);
      if (givenUp.length === 0) return 0;
      let lastSaid = Date.now();
      const summary: ReplaySummary = await replay(
        harness.s3ThroughDoor,
        harness.direct.kinesis,
        pipeline.names.quarantineBucket,
        givenUp,
        {
          streamName: pipeline.names.stream,
          ratePerSecond: 1_000,
          onWritten: (sequenceNumber) => ledger.replayWritten(sequenceNumber),
          // A replay of thousands of records takes a while: the run says how far it is, as settle does.
          onProgress: (done, total) => {
            if (Date.now() - lastSaid < PROGRESS_EVERY_MS && done < total) return;
            lastSaid = Date.now();
            clock.say(`replay: ${done} of ${total} records back into the stream and marked`);
          },
        },
      );
      return summary.replayed;
    },
    {
      moving: clock.moving,
      onRetry: (error, attempt) =>
        clock.say(`replay refused for the moment (${(error as Error).name}), running it again (${attempt})`),
    },
  );
  return replayed ?? 0;
}

/** Valid jobs dead-lettered more often than they were sent back (`sentBack`, per call): due for a redrive. */
export function jobsToRedrive(ledger: Ledger, sentBack: ReadonlyMap<string, number>) {
  return ledger
    .deadValidJobs()
    .filter((j) => (sentBack.get(j.callId) ?? 0) < ledger.deadMessagesOf(j.callId));
}

/**
 * Whether the operator has more to do: a valid input not applied yet, or a valid job in a DLQ not sent back
 * yet, whose call may be finished while its outcome was never published (ledger.deadValidJobs).
 */
export function recoveryDue(ledger: Ledger, sentBack: ReadonlyMap<string, number>): boolean {
  return ledger.unapplied().count > 0 || jobsToRedrive(ledger, sentBack).length > 0;
}

/** Valid jobs dead-lettered more often than they were sent back: to their queue again. */
async function redriveJobs(harness: Harness, ledger: Ledger, sentBack: Map<string, number>): Promise<number> {
  const { pipeline } = harness;
  const due = jobsToRedrive(ledger, sentBack);
  for (const fifo of [false, true]) {
    const jobs = due.filter((j) => j.fifo === fifo);
    await sendJobs(
      pipeline.sqs,
      fifo ? pipeline.queues.sessionJobs.url : pipeline.queues.toolJobs.url,
      jobs.map((j) => ({
        index: 0,
        job: { kind: "job", body: j.body, callId: j.callId, group: j.group, transient: false, enqueuedAt: 0 },
        // A redrive's copy number names its round's send: FIFO deduplication must not swallow it (§3).
        copy: 10 + (sentBack.get(j.callId) ?? 0),
      })),
      fifo,
      ledger,
    );
  }
  for (const j of due) sentBack.set(j.callId, (sentBack.get(j.callId) ?? 0) + 1);
  return due.length;
}

export async function recover(
  harness: Harness,
  ledger: Ledger,
  clock: RunClock,
  replay: Replay,
): Promise<Recovery> {
  ledger.phase = Phase.Replay;
  const redriven = new Set<string>();
  const sentBack = new Map<string, number>();
  let replayedRecords = 0;
  let redrivenJobs = 0;
  let settled: Settled = Settled.Done;
  let round = 0;
  const roundTimes: RoundTimes[] = [];
  const allQuarantined = () => ledger.givenUpNotQuarantined().count === 0;
  while (round < MAX_ROUNDS && recoveryDue(ledger, sentBack)) {
    round += 1;
    harness.faults.round = round;
    const began = Date.now();
    // Every given-up record must be in the quarantine before it is listed: the replay reads only that.
    settled = await settle(harness, ledger, clock, Date.now(), allQuarantined, () => {
      const open = ledger.givenUpNotQuarantined(3);
      return `round ${round}, before the replay: ${open.count} given-up records not yet in the quarantine (${open.names.join("; ")}); ${redriven.size} failure records redriven from the failure queue's DLQ`;
    });
    await redriveFailureRecords(harness, ledger, redriven);
    if (!allQuarantined()) {
      // Redriven just now: wait for dlq-redrive to store them.
      settled = await settle(
        harness,
        ledger,
        clock,
        Date.now(),
        allQuarantined,
        () => `round ${round}: waiting for dlq-redrive to store the redriven failure records`,
      );
    }
    const quarantined = Date.now();
    if (settled === Settled.OutOfTime) {
      roundTimes.push({ quarantineMs: quarantined - began, replayMs: 0, settleMs: 0 });
      break;
    }
    const replayed = await replayGivenUp(harness, ledger, replay, clock);
    const jobs = await redriveJobs(harness, ledger, sentBack);
    replayedRecords += replayed;
    redrivenJobs += jobs;
    clock.say(`round ${round}: ${replayed} records back into the stream, ${jobs} jobs back to their queues`);
    const since = Date.now();
    settled = await settle(
      harness,
      ledger,
      clock,
      since,
      () => ledger.unapplied().count === 0 && ledger.replayPending === 0,
      () =>
        `round ${round}: ${ledger.unapplied().count} valid inputs not yet applied, ${ledger.replayPending} replayed records not yet read`,
    );
    roundTimes.push({
      quarantineMs: quarantined - began,
      replayMs: since - quarantined,
      settleMs: Date.now() - since,
    });
    if (settled === Settled.OutOfTime) break;
    if (replayed === 0 && jobs === 0 && settled === Settled.Idle) break;
  }
  return { rounds: round, replayedRecords, redrivenJobs, settled, roundTimes };
}
