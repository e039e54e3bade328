/**
 * One chaos run: the emulators behind the doors, the local pipeline with the injector and the observer
 * between its mappings and functions, paced production in chunks with the reshard and the SQS restart
 * in the middle, DLQs drained into the ledger, then the downstream recovers and the replay brings back
 * what was set aside, and the ledger judges.
 */
import { DynamoDBClient, ScanCommand } from "@aws-sdk/client-dynamodb";
import type { S3Client } from "@aws-sdk/client-s3";
import {
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { OrderingMode, putRecords } from "@mcp-pipeline/aws";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { healthCheck, type RunningEmulator, startEmulatorThread } from "@mcp-pipeline/emulators";
import type { PartialSplitAccounting } from "@mcp-pipeline/local-esm";
import {
  drainQueue,
  type JobItem,
  LocalPipeline,
  listGivenUp,
  type PartialSplits,
  stuckWrites,
} from "@mcp-pipeline/local-pipeline";
import { replayQuarantine, storedQuarantineKeys } from "@mcp-pipeline/recovery";
import { sleep } from "@mcp-pipeline/retry";
import { type EnvironmentSettings, resourceNames } from "@mcp-pipeline/settings";
import { type DoorCounts, startDynamoDbDoor, startS3Door } from "./doors.js";
import { failureRangeOf } from "./failure-range.js";
import { type InvocationFaultCounts, invocationFaults } from "./injector.js";
import { type JobSend, jobMessage } from "./job-messages.js";
import { type Check, type FinalState, Ledger, Phase, type StallBounds } from "./ledger.js";
import { observeInvocations } from "./observer.js";
import type { FaultPlan } from "./plan.js";
import { mergeChildren, type ReshardStep, splitOneShard } from "./reshard.js";
import { startRestartableSqs } from "./sqs-restart.js";
import { type TimeoutCause, Watchdog } from "./watchdog.js";

export interface RunOptions {
  readonly settings: EnvironmentSettings;
  readonly timeScale: number;
  readonly timeoutMs: number;
  /**
   * Give up sooner when nothing has moved for this long: no record delivered, no function invoked, no
   * message dead-lettered. Absent: only `timeoutMs` ends a run that does not finish.
   */
  readonly stallTimeoutMs?: number;
  readonly distDir: string;
  readonly onProgress?: (line: string) => void;
  /** The functions' warning and error logs. */
  readonly onLog?: (functionName: string, line: string) => void;
  /** The Kinesis mapping's accounting of a bisect-on partial split (§1.4); the local ESM's default when absent. */
  readonly partialSplitAccounting?: PartialSplitAccounting;
}

export interface ChaosResult {
  readonly seed: number;
  /** With bisect on, whether a partial answer's split used a retry (§1.4, undocumented); null: no split. */
  readonly partialSplits: PartialSplits;
  readonly durationMs: number;
  readonly timedOut: boolean;
  /** Why the run stopped waiting, when it timed out: the deadline, or nothing moved for `quietMs`. */
  readonly timeout: { readonly cause: TimeoutCause; readonly quietMs: number } | undefined;
  readonly pass: boolean;
  readonly checks: readonly Check[];
  readonly counts: ReturnType<Ledger["counts"]>;
  readonly faults: DoorCounts &
    InvocationFaultCounts & {
      stuckWriteRefusals: number;
      sqsRefusedConnections: number;
      sqsDownMs: number;
      replayedRecords: number;
      redrivenJobs: number;
    };
  readonly reshard: readonly ReshardStep[];
  readonly bounds: StallBounds;
  /** What was still in flight when the run timed out (empty otherwise). */
  readonly inFlight: readonly string[];
}

const credentials = { accessKeyId: "local", secretAccessKey: "local" };

/**
 * The stall bounds, from the settings: a key waits at most for its batch's attempts (retries + 1, each
 * at most a function timeout, with bisection's halves, §1.3) and the SQS outage; a group for a message's
 * receives (each failed one costs a visibility timeout, §2.3, §3) and the outage. Plus a margin for a
 * loaded machine, stated here rather than hidden.
 */
export function stallBounds(settings: EnvironmentSettings, timeScale: number, outageMs: number): StallBounds {
  const margin = 30_000;
  const p = settings.processor;
  const fifo = settings.fifo_worker;
  return {
    partitionKeyMs: Math.round(
      ((p.esm.maximum_retry_attempts + 1) * 2 * p.timeout_seconds * 1000) / timeScale + outageMs + margin,
    ),
    groupMs: Math.round(
      (fifo.queue.max_receive_count * fifo.queue.visibility_timeout_seconds * 1000) / timeScale +
        outageMs +
        margin,
    ),
  };
}

type BatchEntry = Omit<SendMessageBatchRequestEntry, "Id">;

/**
 * Sends messages ten a request, each request retried every 200 ms while the SQS endpoint is down (the
 * restart); returns their message ids in order. Entries SQS refuses either fail the run (`refused:
 * "throw"`) or are sent again with their request (`"retry"`).
 */
async function sendInTens(
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

function sendJobs(
  sqs: SQSClient,
  queueUrl: string,
  sends: readonly JobSend[],
  fifo: boolean,
): Promise<string[]> {
  return sendInTens(
    sqs,
    queueUrl,
    sends.map((send) => jobMessage(send, fifo)),
    "throw",
  );
}

/** Failure records back to the failure queue (a redrive makes new messages, §4); retried while SQS is down. */
async function redriveFailureRecords(sqs: SQSClient, queueUrl: string, bodies: readonly string[]) {
  // A batch retried whole may send a failure record twice: dlq-redrive stores only what is absent.
  await sendInTens(
    sqs,
    queueUrl,
    bodies.map((body) => ({ MessageBody: body })),
    "retry",
  );
}

/** A run whose plan asked for a fault that never happened has not shown what it claims to. */
export function faultsExercised(
  plan: FaultPlan,
  happened: Record<keyof FaultPlan["options"]["rates"], number>,
): Check {
  const missing = (Object.keys(happened) as (keyof typeof happened)[]).filter(
    (kind) => plan.options.rates[kind] > 0 && happened[kind] === 0,
  );
  return {
    name: "every fault kind asked for happened",
    pass: missing.length === 0,
    detail:
      missing.length === 0 ? "yes" : `never happened: ${missing.join(", ")} (a longer run or a higher rate)`,
  };
}

async function finalState(
  dynamodb: DynamoDBClient,
  s3: S3Client,
  pipeline: LocalPipeline,
): Promise<FinalState> {
  const requested = new Set<string>();
  const finished = new Set<string>();
  let start: Record<string, never> | undefined;
  do {
    const page = await dynamodb.send(
      new ScanCommand({
        TableName: pipeline.names.toolCallsTable,
        ProjectionExpression: "callId, requestedAt, #s",
        ExpressionAttributeNames: { "#s": "status" },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of page.Items ?? []) {
      const callId = item.callId?.S ?? "";
      if (item.requestedAt) requested.add(callId);
      const status = item.status?.S;
      if (status === "completed" || status === "failed") finished.add(callId);
    }
    start = page.LastEvaluatedKey as Record<string, never> | undefined;
  } while (start);
  const keys = await storedQuarantineKeys(s3, pipeline.names.quarantineBucket, "");
  const quarantined = new Set(
    [...keys].map((key) => key.slice(key.lastIndexOf("/") + 1).replace(/\.json$/, "")),
  );
  return { requested, finished, quarantined };
}

export async function runChaos(plan: FaultPlan, options: RunOptions): Promise<ChaosResult> {
  const region = options.settings.region;
  const started = Date.now();
  const watchdog = new Watchdog(
    started + options.timeoutMs,
    options.stallTimeoutMs ?? Number.POSITIVE_INFINITY,
    started,
  );
  let stopped: { readonly cause: TimeoutCause; readonly quietMs: number } | undefined;
  /** Whether the run must stop waiting: records why, and how long nothing had moved, the first time. */
  const outOfTime = () => {
    const now = Date.now();
    const cause = stopped ? undefined : watchdog.expired(now);
    if (cause) stopped = { cause, quietMs: watchdog.quietMs(now) };
    return stopped !== undefined;
  };
  const { schedule, scenario } = plan;
  const ledger = new Ledger();
  let active = false;
  const doorCounts: DoorCounts = { dynamodbFaults: 0, dynamodbAfterWriteFaults: 0, s3Faults: 0 };
  const invocationCounts: InvocationFaultCounts = { throttles: 0, exceptions: 0, timeouts: 0 };
  let stuckWriteRefusals = 0;
  const say = (line: string) =>
    options.onProgress?.(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${line}`);
  let pipeline: LocalPipeline | undefined;
  const invocations = () =>
    [...(pipeline?.functions.values() ?? [])].reduce((n, f) => n + f.stats.invocations, 0);
  /** What moves while the run makes progress (what settles an input moves one of these first). */
  const observeProgress = () =>
    watchdog.observe(
      `${ledger.deliveredStream} delivered, ${invocations()} invoked, ${ledger.dead.size} dead-lettered`,
      Date.now(),
    );
  /** The mappings' requests abandoned for want of an answer (§9.1 item 13, §9.2 item 10), each retried. */
  const abandoned = () =>
    (pipeline?.kinesisEsm?.stats.abandonedRequests ?? 0) +
    [...(pipeline?.sqsEsms.values() ?? [])].reduce((n, esm) => n + esm.stats.abandonedRequests, 0);
  /** Invocations (errors) per function, for the progress lines; abandoned requests when there are some. */
  const activity = () =>
    [...(pipeline?.functions.entries() ?? [])]
      .map(
        ([name, f]) => `${name} ${f.stats.invocations}${f.stats.errors ? ` (${f.stats.errors} errors)` : ""}`,
      )
      .join(", ") + (abandoned() > 0 ? `; mapping requests abandoned unanswered: ${abandoned()}` : "");

  const running: RunningEmulator[] = [];
  const stopAll = async () => {
    for (const r of running.reverse()) await r.stop().catch(() => undefined);
  };
  try {
    const [dynalite, kinesalite, s3Emulator, sqsEndpoint] = await Promise.all([
      startEmulatorThread("dynamodb"),
      startEmulatorThread("kinesis"),
      startEmulatorThread("sqs-s3"),
      startRestartableSqs(),
    ]);
    running.push(dynalite, kinesalite, s3Emulator, sqsEndpoint);
    await Promise.all([
      healthCheck(dynalite.endpoint, "dynamodb"),
      healthCheck(kinesalite.endpoint, "kinesis"),
      healthCheck(sqsEndpoint.endpoint, "sqs"),
    ]);
    const names = resourceNames(options.settings.name_prefix);
    const doorOptions = {
      plan,
      active: () => active,
      onEffect: (effect: Parameters<Ledger["effect"]>[0]) => ledger.effect(effect, Date.now()),
      toolCallsTable: names.toolCallsTable,
      dedupeTable: names.dedupeTable,
      quarantineBucket: names.quarantineBucket,
    };
    const [dynamoDbDoor, s3Door] = await Promise.all([
      startDynamoDbDoor(dynalite.endpoint, doorOptions, doorCounts),
      startS3Door(s3Emulator.endpoint, doorOptions, doorCounts),
    ]);
    running.push(dynamoDbDoor, s3Door);
    const faults = invocationFaults(plan, () => active, invocationCounts);
    const observe = observeInvocations(ledger);
    pipeline = new LocalPipeline({
      settings: options.settings,
      ...(options.partialSplitAccounting ? { partialSplitAccounting: options.partialSplitAccounting } : {}),
      timeScale: options.timeScale,
      distDir: options.distDir,
      endpoints: {
        dynamodb: dynamoDbDoor.endpoint,
        kinesis: kinesalite.endpoint,
        sqs: sqsEndpoint.endpoint,
        s3: s3Door.endpoint,
      },
      region,
      onLog: options.onLog ?? (() => {}),
      onKinesisEvent: (e) => {
        if (process.env.CHAOS_DEBUG) process.stderr.write(`kinesis ${JSON.stringify(e)}\n`);
        if (e.type === "request-abandoned")
          say(
            `the Kinesis mapping's ${e.operation}${e.shardId ? ` (${e.shardId})` : ""} got no answer in ${e.boundMs} ms: abandoned, retrying`,
          );
        if (e.type === "destination-failed")
          say(
            `the Kinesis mapping could not deliver the failure record of ${e.record.KinesisBatchInfo.shardId} ${e.record.KinesisBatchInfo.startSequenceNumber}..${e.record.KinesisBatchInfo.endSequenceNumber} (${e.errorName}): its ${e.record.KinesisBatchInfo.batchSize} records are dropped, as AWS drops them (§6)`,
          );
      },
      // The observer stands outside the injector: it sees what the mapping hands over, once per try.
      wrapInvoke: (name, invoke) => observe(name, faults(name, invoke)),
      processorDynamoDbFault: (target, body) => {
        const fault = stuckWrites(target, body);
        if (fault) stuckWriteRefusals += 1;
        return fault;
      },
    });
    await pipeline.start();
    // The ledger's own clients go round the doors: what it reads is never a fault it injected.
    const direct = {
      dynamodb: new DynamoDBClient({ endpoint: dynalite.endpoint, region, credentials }),
      s3: s3Client({ endpoint: s3Emulator.endpoint, region, credentials }, {}),
      // The project's factory: HTTP/1.1, which the emulator speaks (the SDK's default is HTTP/2).
      kinesis: kinesisClient({ endpoint: kinesalite.endpoint, region, credentials }),
    };
    active = true;
    say(
      `pipeline up; producing ${scenario.stream.length} records and ${scenario.jobs.length + scenario.fifoJobs.length} jobs in ${schedule.chunks} chunks`,
    );

    const reshard: ReshardStep[] = [];
    let sqsDownMs = 0;
    const drainDlqs = async () => {
      const p = pipeline as LocalPipeline;
      for (const [queue, url] of [
        ["tool", p.queues.toolJobsDlq.url],
        ["fifo", p.queues.sessionJobsDlq.url],
        ["stream", p.queues.streamFailuresDlq.url],
      ] as const) {
        // Each page is in the ledger before it is deleted: a drain that fails part-way (the SQS restart)
        // loses nothing it took, and the next round reads the rest.
        await drainQueue(p.sqs, url, (page) => {
          for (const m of page) {
            ledger.deadLettered(queue, m);
            const range = queue === "stream" ? failureRangeOf(m.body) : undefined;
            if (range) ledger.failureRecordDeadLettered(m.id, range);
          }
        }).catch(() => undefined);
      }
    };

    // Production, paced: at most one chunk ahead of the Kinesis mapping (records the processor received
    // or the mapping gave up, ledger.streamBacklog), so the reshard and the restart happen while records
    // flow, and 100,000 events never sit in one backlog.
    const perChunk = (items: readonly JobItem[], c: number) =>
      items.slice(
        Math.floor((items.length * c) / schedule.chunks),
        Math.floor((items.length * (c + 1)) / schedule.chunks),
      );
    for (let c = 0; c < schedule.chunks; c++) {
      observeProgress();
      if (outOfTime()) break;
      for (let wait = 1; ledger.streamBacklog > plan.options.chunk; wait++) {
        observeProgress();
        if (outOfTime()) break;
        if (wait % 50 === 0)
          say(
            `waiting for the processor: ${ledger.streamBacklog} of ${ledger.producedStream} records neither delivered nor given up; ${activity()}`,
          );
        await sleep(100);
      }
      const from = Math.floor((scenario.stream.length * c) / schedule.chunks);
      const items = scenario.stream.slice(
        from,
        Math.floor((scenario.stream.length * (c + 1)) / schedule.chunks),
      );
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
          callId: "callId" in item ? item.callId : undefined,
          shardId: w.shardId,
          sequenceNumber: w.sequenceNumber,
        });
      }
      for (const [fifo, all, twice, url] of [
        [false, scenario.jobs, plan.duplicateJobs, pipeline.queues.toolJobs.url],
        [true, scenario.fifoJobs, plan.duplicateFifoJobs, pipeline.queues.sessionJobs.url],
      ] as const) {
        const offset = Math.floor((all.length * c) / schedule.chunks);
        const jobs = perChunk(all, c).flatMap((job, n): JobSend[] =>
          twice.has(offset + n) && job.kind === "job"
            ? [
                { job, index: offset + n, copy: 0 },
                { job, index: offset + n, copy: 1 },
              ]
            : [{ job, index: offset + n, copy: 0 }],
        );
        const ids = await sendJobs(pipeline.sqs, url, jobs, fifo);
        jobs.forEach(({ job }, n) => {
          ledger.recordJob(
            fifo,
            job.group,
            job.kind === "job" ? job.callId : undefined,
            job.body,
            ids[n] ?? "",
          );
        });
      }
      const chunkNo = c + 1;
      if (chunkNo === schedule.split) {
        const step = await splitOneShard(pipeline.kinesis, pipeline.names.stream);
        reshard.push(step);
        say(`split ${step.parents.join(", ")} into ${step.children.join(", ")}`);
      }
      if (chunkNo === schedule.merge && reshard[0]) {
        const step = await mergeChildren(pipeline.kinesis, pipeline.names.stream, reshard[0]);
        reshard.push(step);
        say(`merged ${step.parents.join(", ")} into ${step.children.join(", ")}`);
      }
      if (chunkNo === schedule.sqsRestart) {
        say("restarting the SQS emulator (the endpoint refuses connections meanwhile)");
        sqsDownMs = (await sqsEndpoint.restart(plan.options.sqsOutageMs)).downMs;
        say(`SQS back after ${sqsDownMs} ms`);
      }
      say(
        `chunk ${chunkNo}/${schedule.chunks}: ${ledger.producedStream} records put, ${ledger.deliveredStream} delivered; ${activity()}`,
      );
    }

    // Until every input is accounted for and the functions are quiet (workers' own events still flow
    // through the processor), or the run is out of time (its deadline, or nothing moved for too long).
    let timedOut = false;
    for (let loop = 0; ; loop++) {
      await drainDlqs();
      const open = ledger.unsettled(3);
      observeProgress();
      if (loop % 10 === 0)
        say(
          `settling: ${open.count} inputs not yet accounted for (${open.names.join("; ")}); ${activity()}; nothing moved for ${(watchdog.quietMs(Date.now()) / 1000).toFixed(0)} s`,
        );
      if (open.count === 0 && watchdog.quietMs(Date.now()) > 1_500) break;
      if (outOfTime()) {
        timedOut = open.count > 0;
        break;
      }
      await sleep(500);
    }

    // The downstream recovers: faults off, the processor's given-up records go back into the stream
    // from the quarantine (docs/operations.md), valid jobs in a DLQ go back to their queue.
    active = false;
    pipeline.faultsActive = false;
    ledger.phase = Phase.Replay;
    let replayedRecords = 0;
    let redrivenJobs = 0;
    if (!timedOut) {
      // The replay reads only the quarantine. A failure record that dlq-redrive could not store within
      // the failure queue's maxReceiveCount receives is in that queue's DLQ (§2.3): redriven to the failure
      // queue as an operator would (docs/operations.md), it is stored; a record still with dlq-redrive is
      // waited for. Else the replay would leave out every record those failure records name.
      const redriven = new Set<string>();
      for (let loop = 0; ; loop++) {
        await drainDlqs();
        const failureRecords = [...ledger.dead].filter(
          ([id, m]) =>
            m.queue === "stream" &&
            !redriven.has(id) &&
            // One that dlq-redrive set aside itself (not a readable failure record) would only come back.
            m.attributes["pipeline.reason.code"] === undefined &&
            failureRangeOf(m.body) !== undefined,
        );
        if (failureRecords.length > 0) {
          await redriveFailureRecords(
            pipeline.sqs,
            pipeline.queues.streamFailures.url,
            failureRecords.map(([, m]) => m.body),
          );
          for (const [id] of failureRecords) redriven.add(id);
        }
        const open = ledger.givenUpNotQuarantined(3);
        observeProgress();
        if (loop % 10 === 0)
          say(
            `before the replay: ${open.count} given-up records not yet in the quarantine (${open.names.join("; ")}); ${redriven.size} failure records redriven from the failure queue's DLQ; ${activity()}`,
          );
        if (open.count === 0) break;
        if (outOfTime()) {
          timedOut = true;
          break;
        }
        await sleep(500);
      }
    }
    if (!timedOut) {
      // The replay marks each record it wrote, so running it again after a failure resumes where it
      // stopped (packages/recovery): a few tries, then the failure is the run's.
      for (let attempt = 1; ; attempt++) {
        const givenUp = await listGivenUp(direct.s3, pipeline.names.quarantineBucket);
        try {
          if (givenUp.length > 0)
            replayedRecords += (
              await replayQuarantine(direct.s3, direct.kinesis, pipeline.names.quarantineBucket, givenUp, {
                streamName: pipeline.names.stream,
                ratePerSecond: 1_000,
                onWritten: (sequenceNumber) => ledger.replayWritten(sequenceNumber),
              })
            ).replayed;
          break;
        } catch (error) {
          if (attempt >= 3) throw error;
          await sleep(1_000);
        }
      }
      const dead = ledger.deadValidJobs();
      redrivenJobs = dead.length;
      for (const fifo of [false, true]) {
        const jobs = dead.filter((j) => j.fifo === fifo);
        await sendJobs(
          pipeline.sqs,
          fifo ? pipeline.queues.sessionJobs.url : pipeline.queues.toolJobs.url,
          // A valid job's deduplication id is its call id's; `index` names only poison jobs.
          jobs.map((j, index) => ({
            index,
            job: {
              kind: "job",
              body: j.body,
              callId: j.callId,
              group: j.group,
              transient: false,
              enqueuedAt: 0,
            },
            copy: 9,
          })),
          fifo,
        );
      }
      say(
        `replay: ${replayedRecords} records back into the stream, ${redrivenJobs} jobs back to their queues`,
      );
      // Every valid input applied is not the end: "each effect once" is judged only after the processor has
      // read every replayed record (most repeat an effect already applied) and the functions are quiet.
      for (let loop = 0; ; loop++) {
        const open = ledger.unapplied(3);
        observeProgress();
        if (loop % 10 === 0)
          say(
            `replaying: ${open.count} valid inputs not yet applied, ${ledger.replayPending} replayed records not yet read`,
          );
        if (open.count === 0 && ledger.replayPending === 0 && watchdog.quietMs(Date.now()) > 1_500) break;
        if (outOfTime()) {
          timedOut = true;
          break;
        }
        await sleep(500);
      }
    }
    await pipeline.stop();
    const final = await finalState(direct.dynamodb, direct.s3, pipeline);
    for (const client of Object.values(direct)) client.destroy();
    const bounds = stallBounds(options.settings, options.timeScale, plan.options.sqsOutageMs);
    const checks = [
      ...ledger.checks(final, bounds, timedOut),
      {
        name: "reshard: split, then merge, children read after parents (§9.1)",
        pass:
          reshard.length === 2 &&
          reshard.every((s) => s.parents.every((p) => pipeline?.kinesisEsm?.finishedShards.has(p))),
        detail:
          reshard.map((s) => `${s.action} ${s.parents.join("+")} -> ${s.children.join("+")}`).join("; ") ||
          "not done",
      },
      {
        name: "SQS emulator restarted mid-run",
        pass: sqsDownMs > 0,
        detail: `down ${sqsDownMs} ms, ${sqsEndpoint.refused()} connections refused meanwhile`,
      },
      faultsExercised(plan, {
        throttle: invocationCounts.throttles,
        exception: invocationCounts.exceptions,
        timeout: invocationCounts.timeouts,
        dynamodb: doorCounts.dynamodbFaults,
        dynamodbAfterWrite: doorCounts.dynamodbAfterWriteFaults,
        s3: doorCounts.s3Faults,
        stuck: stuckWriteRefusals,
        poison: ledger.counts().streamKinds.poison + ledger.counts().poisonJobs,
        duplicate: ledger.counts().streamKinds.duplicate + ledger.counts().jobMessages - ledger.counts().jobs,
        transient: scenario.jobs.concat(scenario.fifoJobs).filter((j) => j.kind === "job" && j.transient)
          .length,
      }),
    ];
    const inFlight = timedOut
      ? ledger
          .unsettled(20)
          .names.concat(ledger.unapplied(20).names)
          .slice(0, 20)
          .concat(
            ledger.replayPending > 0
              ? [`${ledger.replayPending} replayed records not yet read by the processor`]
              : [],
          )
      : [];
    return {
      seed: plan.options.seed,
      partialSplits: pipeline.partialSplits,
      durationMs: Date.now() - started,
      timedOut,
      timeout: timedOut ? stopped : undefined,
      pass: !timedOut && checks.every((c) => c.pass),
      checks,
      counts: ledger.counts(),
      faults: {
        ...doorCounts,
        ...invocationCounts,
        stuckWriteRefusals,
        sqsRefusedConnections: sqsEndpoint.refused(),
        sqsDownMs,
        replayedRecords,
        redrivenJobs,
      },
      reshard,
      bounds,
      inFlight,
    };
  } finally {
    await pipeline?.stop();
    await stopAll();
  }
}
