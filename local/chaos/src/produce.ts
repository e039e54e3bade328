/**
 * Production, paced: the stream records and both queues' jobs in chunks, at most one chunk ahead of the
 * Kinesis mapping (records the processor received or the mapping gave up, `Ledger.streamBacklog`), so the
 * reshard and the SQS restart happen while records flow, and 100,000 events never sit in one backlog.
 */
import {
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { OrderingMode, putRecords } from "@mcp-pipeline/aws";
import type { JobItem } from "@mcp-pipeline/local-runtime";
import { sleep } from "@mcp-pipeline/retry";
import type { Harness } from "./harness.js";
import { type JobSend, jobMessage } from "./job-messages.js";
import { type Ledger, putEventOf } from "./ledger.js";
import type { FaultPlan } from "./plan.js";
import { mergeChildren, type ReshardStep, splitOneShard } from "./reshard.js";
import type { ProductionTimeline } from "./timeline.js";

type BatchEntry = Omit<SendMessageBatchRequestEntry, "Id">;

/**
 * Sends messages ten a request, each request retried every 200 ms while the SQS endpoint is down (the
 * restart); returns their message ids in order. Entries SQS refuses either fail the run (`refused:
 * "throw"`) or are sent again with their request (`"retry"`).
 */
export async function sendInTens(
  sqs: SQSClient,
  queueUrl: string,
  entries: readonly BatchEntry[],
  refused: "throw" | "retry",
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < entries.length; i += 10) {
    const chunk = entries.slice(i, i + 10);
    for (;;) {
      const response = await sqs
        .send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: chunk.map((entry, n) => ({ Id: String(n), ...entry })),
          }),
        )
        .catch(() => undefined);
      const failed = response?.Failed?.length ?? 0;
      if (response && failed > 0 && refused === "throw")
        throw new Error(`SendMessageBatch refused ${failed} messages`);
      if (response && failed === 0) {
        const byId = new Map((response.Successful ?? []).map((s) => [s.Id, s.MessageId ?? ""]));
        for (let n = 0; n < chunk.length; n++) ids.push(byId.get(String(n)) ?? "");
        break;
      }
      await sleep(200);
    }
  }
  return ids;
}

/** Sends jobs to their queue and records each message in the ledger (a second send of a job is one more message of it). */
export async function sendJobs(
  sqs: SQSClient,
  queueUrl: string,
  sends: readonly JobSend[],
  fifo: boolean,
  ledger: Ledger,
): Promise<void> {
  const ids = await sendInTens(
    sqs,
    queueUrl,
    sends.map((send) => jobMessage(send, fifo)),
    "throw",
  );
  sends.forEach(({ job }, n) => {
    ledger.recordJob(
      fifo,
      job.group,
      job.kind === "job" ? { callId: job.callId, rejected: job.rejected ?? false } : undefined,
      job.body,
      ids[n] ?? "",
    );
  });
}

export interface Production {
  readonly reshard: readonly ReshardStep[];
  readonly sqsDownMs: number;
}

type RunPace = {
  readonly say: (line: string) => void;
  readonly moving: () => boolean;
  readonly activity: () => string;
};

/** Told what the producer did for each chunk, when a timeline is recorded (--timeline). */
export type ChunkMarker = (marks: Parameters<ProductionTimeline["chunk"]>[0]) => void;

/** The part of `items` chunk `c` of `chunks` holds: every chunk its share, in order. */
function chunkOf<T>(items: readonly T[], c: number, chunks: number): readonly T[] {
  return items.slice(Math.floor((items.length * c) / chunks), Math.floor((items.length * (c + 1)) / chunks));
}

/** At most one chunk ahead of the Kinesis mapping: waits while the backlog is full, or the run is out of time. */
async function waitForBacklog(plan: FaultPlan, ledger: Ledger, run: RunPace): Promise<void> {
  for (let wait = 1; ledger.streamBacklog > plan.options.chunk; wait++) {
    if (!run.moving()) break;
    if (wait % 50 === 0)
      run.say(
        `waiting for the processor: ${ledger.streamBacklog} of ${ledger.producedStream} records neither delivered nor given up; ${run.activity()}`,
      );
    await sleep(100);
  }
}

/** Puts a chunk's records in order and records each where it landed. */
async function putChunk(
  pipeline: Harness["pipeline"],
  ledger: Ledger,
  items: readonly FaultPlan["scenario"]["stream"][number][],
): Promise<void> {
  const result = await putRecords(
    pipeline.kinesis,
    { streamName: pipeline.names.stream },
    items.map((s) => ({ data: s.data, partitionKey: s.partitionKey })),
    { ordering: OrderingMode.Strict },
  );
  if (result.rejected.length > 0)
    throw new Error(`${result.rejected.length} stream records could not be put`);
  for (const w of [...result.written].sort((a, b) => a.index - b.index)) {
    const item = items[w.index] as (typeof items)[number];
    ledger.recordStream({
      kind: item.kind,
      key: item.partitionKey,
      shardId: w.shardId,
      sequenceNumber: w.sequenceNumber,
      event: item.kind === "poison" ? undefined : putEventOf(item.data),
      data: item.data,
    });
  }
}

/** Sends a chunk's jobs to both queues, a job the plan duplicates sent twice (a producer's second send). */
async function sendChunkJobs(plan: FaultPlan, harness: Harness, ledger: Ledger, c: number): Promise<void> {
  const { schedule, scenario } = plan;
  const { pipeline } = harness;
  for (const [fifo, all, twice, url] of [
    [false, scenario.jobs, plan.duplicateJobs, pipeline.queues.toolJobs.url],
    [true, scenario.fifoJobs, plan.duplicateFifoJobs, pipeline.queues.sessionJobs.url],
  ] as const) {
    const offset = Math.floor((all.length * c) / schedule.chunks);
    const jobs = chunkOf<JobItem>(all, c, schedule.chunks).flatMap((job, n): JobSend[] =>
      twice.has(offset + n) && job.kind === "job"
        ? [
            { job, index: offset + n, copy: 0 },
            { job, index: offset + n, copy: 1 },
          ]
        : [{ job, index: offset + n, copy: 0 }],
    );
    await sendJobs(pipeline.sqs, url, jobs, fifo, ledger);
  }
}

/**
 * What the schedule puts after chunk `chunkNo`: the split, the merge of its children, the SQS restart.
 * Returns how long SQS was down when it restarted it.
 */
async function midRunChanges(
  chunkNo: number,
  plan: FaultPlan,
  harness: Harness,
  reshard: ReshardStep[],
  run: RunPace,
): Promise<number | undefined> {
  const { schedule } = plan;
  const { pipeline } = harness;
  if (chunkNo === schedule.split) {
    const step = await splitOneShard(pipeline.kinesis, pipeline.names.stream);
    reshard.push(step);
    run.say(`split ${step.parents.join(", ")} into ${step.children.join(", ")}`);
  }
  if (chunkNo === schedule.merge && reshard[0]) {
    const step = await mergeChildren(pipeline.kinesis, pipeline.names.stream, reshard[0]);
    reshard.push(step);
    run.say(`merged ${step.parents.join(", ")} into ${step.children.join(", ")}`);
  }
  if (chunkNo !== schedule.sqsRestart) return undefined;
  run.say("restarting the SQS emulator (the endpoint refuses connections meanwhile)");
  const { downMs } = await harness.sqs.restart(plan.options.sqsOutageMs);
  run.say(`SQS back after ${downMs} ms`);
  return downMs;
}

/** Produces the plan's workload; `waitWhile` waits while the backlog is full and says false when the run is out of time. */
export async function produce(
  plan: FaultPlan,
  harness: Harness,
  ledger: Ledger,
  run: RunPace,
  mark?: ChunkMarker,
): Promise<Production> {
  const { schedule, scenario } = plan;
  const reshard: ReshardStep[] = [];
  let sqsDownMs = 0;
  for (let c = 0; c < schedule.chunks; c++) {
    if (!run.moving()) break;
    const waitFrom = Date.now();
    await waitForBacklog(plan, ledger, run);
    const putFrom = Date.now();
    const stream = [ledger.producedStream, 0] as [number, number];
    await putChunk(harness.pipeline, ledger, chunkOf(scenario.stream, c, schedule.chunks));
    const putAt = Date.now();
    stream[1] = ledger.producedStream;
    const jobs = [ledger.jobs.length, 0] as [number, number];
    await sendChunkJobs(plan, harness, ledger, c);
    const sentAt = Date.now();
    jobs[1] = ledger.jobs.length;
    const chunkNo = c + 1;
    sqsDownMs = (await midRunChanges(chunkNo, plan, harness, reshard, run)) ?? sqsDownMs;
    mark?.({ chunk: chunkNo, waitFrom, putFrom, putAt, sentAt, changedAt: Date.now(), stream, jobs });
    run.say(
      `chunk ${chunkNo}/${schedule.chunks}: ${ledger.producedStream} records put, ${ledger.deliveredStream} delivered; ${run.activity()}`,
    );
  }
  return { reshard, sqsDownMs };
}
