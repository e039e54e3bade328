/**
 * Waiting for the pipeline without waiting for a timer: until what the caller waits for has happened, or
 * nothing can happen any more (the pipeline is idle: no invocation in flight, no message in a mapping's
 * hands or in a source queue, every failure record taken by dlq-redrive, every shard read to its end since
 * the last invocation), or the run is out of time. An idle pipeline with inputs not accounted for has
 * acknowledged them without their effect: the verdict names them; a run out of time only says so.
 */
import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { drainQueue } from "@mcp-pipeline/local-runtime";
import { sleep } from "@mcp-pipeline/retry";
import { failureRangeOf } from "./failure-range.js";
import type { Harness } from "./harness.js";
import type { Ledger } from "./ledger.js";

export const Settled = { Done: "done", Idle: "idle", OutOfTime: "out of time" } as const;
export type Settled = (typeof Settled)[keyof typeof Settled];

export interface RunClock {
  readonly say: (line: string) => void;
  /** False once the run is out of time (its deadline, or nothing moved for too long). */
  readonly moving: () => boolean;
  readonly activity: () => string;
  /** How long nothing has moved (ms). */
  readonly quietMs: () => number;
}

/** Takes everything in the DLQs into the ledger (received, kept, deleted; a FIFO DLQ read whole, §3). */
export async function drainDlqs(harness: Harness, ledger: Ledger): Promise<void> {
  const { pipeline } = harness;
  for (const [queue, url] of [
    ["tool", pipeline.queues.toolJobsDlq.url],
    ["fifo", pipeline.queues.sessionJobsDlq.url],
    ["stream", pipeline.queues.streamFailuresDlq.url],
  ] as const) {
    // Each page is in the ledger before it is deleted: a drain that fails part-way (the SQS restart)
    // loses nothing it took, and the next round reads the rest.
    await drainQueue(pipeline.sqs, url, (page) => {
      for (const m of page) {
        ledger.deadLettered(queue, m);
        const range = queue === "stream" ? failureRangeOf(m.body) : undefined;
        if (range) ledger.failureRecordDeadLettered(m.id, range);
      }
    }).catch(() => undefined);
  }
}

/** Messages in the source queues, visible or in flight (a failed receive waits out its visibility). */
async function queuedMessages(harness: Harness): Promise<number> {
  const { pipeline } = harness;
  let total = 0;
  for (const url of [
    pipeline.queues.toolJobs.url,
    pipeline.queues.sessionJobs.url,
    pipeline.queues.streamFailures.url,
  ]) {
    const { Attributes = {} } = await pipeline.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
      }),
    );
    total +=
      Number(Attributes.ApproximateNumberOfMessages ?? 0) +
      Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0);
  }
  return total;
}

/**
 * Whether nothing can move: the pipeline drained since `since` (the failure records SQS dead-lettered, which
 * dlq-redrive's mapping never deletes, counted as done with) and the source queues empty.
 */
export async function idle(harness: Harness, since: number, ledger: Ledger): Promise<boolean> {
  if (!harness.pipeline.drained(since, ledger.deadLetteredFailureRecords)) return false;
  return (await queuedMessages(harness).catch(() => 1)) === 0;
}

/**
 * Polls until the pipeline is idle twice in a row (then `done`, checked after draining the DLQs, says
 * whether what the caller waited for happened) or the run is out of time. Waiting for idle even once
 * `done` holds lets the workers' own events run their course: what they publish is judged too. `status`
 * is said every tenth poll.
 */
export async function settle(
  harness: Harness,
  ledger: Ledger,
  clock: RunClock,
  since: number,
  done: () => boolean,
  status: () => string,
): Promise<Settled> {
  let idleBefore = false;
  for (let poll = 0; ; poll++) {
    await drainDlqs(harness, ledger);
    if (poll % 10 === 0)
      clock.say(
        `${status()}; ${clock.activity()}; nothing moved for ${(clock.quietMs() / 1000).toFixed(0)} s`,
      );
    if (!clock.moving()) return Settled.OutOfTime;
    const now = await idle(harness, since, ledger);
    // Twice in a row, a poll apart: a hand-over between two pollers is not taken for the end.
    if (now && idleBefore) return done() ? Settled.Done : Settled.Idle;
    idleBefore = now;
    await sleep(500);
  }
}
