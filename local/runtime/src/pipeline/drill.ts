/**
 * `npm start -- --serve --drill`: a served stack with real failures left in it for an operator to find
 * and recover (docs/operations.md, "Drill"). Every failure is made by the pipeline itself, from inputs
 * and faults the drill controls:
 * - permanent poison of each reason the processor quarantines (bad-encoding, bad-json, schema-violation,
 *   unsupported-version), and poison messages in each DLQ (the tool and FIFO queues' workers dead-letter
 *   bodies that are not jobs; dlq-redrive dead-letters a message that is not an on-failure record);
 * - valid events given up by the processor's mapping (its writes throttled until the stack is ready:
 *   RetryAttemptsExhausted in the quarantine, through the failure queue and dlq-redrive);
 * - valid jobs whose downstream is down (503 from the drill's downstream): retried until SQS moves them
 *   to the tool DLQ (maxReceiveCount);
 * - a stalled FIFO group: its first jobs call the downstream, the jobs behind them wait (§3), until the
 *   first ones reach the FIFO DLQ; the downstream comes back up then.
 * The drill's ledger (drill-ledger.ts) says where each input must end; `npm run drill:check` judges it.
 */
import { createHash } from "node:crypto";
import { SendMessageBatchCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { putRecords } from "@mcp-pipeline/aws";
import { CURRENT_SPEC_VERSION, encodeLifecycleEvent, encodeToolCallJob } from "@mcp-pipeline/contracts";
import { listQuarantine } from "@mcp-pipeline/recovery";
import { sleep } from "@mcp-pipeline/retry";
import { FailureCondition } from "../esm/kinesis/failure-record.js";
import type { DrillDownstream } from "./drill-downstream.js";
import {
  DRILL_LEDGER_FORMAT,
  DrillExpectation,
  type DrillInput,
  type DrillLedger,
  type DrillQueue,
} from "./drill-ledger.js";
import type { LocalPipeline } from "./pipeline.js";
import { queueDepth } from "./queue-depth.js";
import { STUCK_PREFIX } from "./scenario.js";

const utf8 = new TextEncoder();
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

/** Stream records the processor can never read, one per reason it quarantines them for. */
const POISON_RECORDS: readonly { reason: string; data: Uint8Array }[] = [
  { reason: "bad-encoding", data: Uint8Array.from([0xff, 0xfe, 0x00, 0x44]) },
  { reason: "bad-json", data: utf8.encode("{ drill: not json") },
  {
    reason: "schema-violation",
    data: utf8.encode('{"specVersion":"1.0","type":"tool_call.started","drill":true}'),
  },
  { reason: "unsupported-version", data: utf8.encode('{"specVersion":"9.0","type":"tool_call.requested"}') },
];
/** Queue bodies a worker can never read, with the reason it dead-letters them for. */
const POISON_BODIES: readonly { reason: string; body: string }[] = [
  { reason: "bad-json", body: "drill: not json at all" },
  { reason: "schema-violation", body: '{"specVersion":"1.0","tool":"drill"}' },
  { reason: "unsupported-version", body: '{"specVersion":"7.1","drill":true}' },
];
/** A message of the failure queue that is not an on-failure record: dlq-redrive dead-letters it. */
const NOT_A_FAILURE_RECORD = '{"drill":"not an on-failure record"}';

/** How many inputs of each kind a drill leaves: few, so that a person can follow each one. */
export const DRILL_SIZE = { givenUpEvents: 3, outageJobs: 3, stalledHeads: 2, stalledFollowers: 3 } as const;

export interface DrillPlan {
  readonly seed: number;
  readonly stalledGroup: string;
  readonly poisonRecords: readonly { reason: string; data: Uint8Array }[];
  /** Valid events whose writes the processor's fault refuses until the stack is ready. */
  readonly givenUpEvents: readonly { callId: string; data: Uint8Array; partitionKey: string }[];
  readonly toolJobs: readonly DrillMessage[];
  readonly fifoJobs: readonly DrillMessage[];
  readonly stalledJobs: readonly DrillMessage[];
  readonly failureQueuePoison: DrillMessage;
}

interface DrillMessage {
  readonly body: string;
  readonly group?: string;
  readonly deduplicationId?: string;
  readonly input: DrillInput;
}

/** A job that calls `path` on the drill's downstream, or counts words. */
function job(callId: string, sessionId: string, path: string | undefined): string {
  return encodeToolCallJob({
    specVersion: CURRENT_SPEC_VERSION,
    callId,
    sessionId,
    tool: path ? "http.request" : "text.stats",
    arguments: path ? { path } : { text: `drill job ${callId}` },
    enqueuedAt: new Date().toISOString(),
  });
}

/** The drill's inputs: ids from the seed, so that two drills on one stack do not collide. */
export function planDrill(seed: number): DrillPlan {
  const run = `drill-${seed}`;
  const outage = outageJobs(run);
  const stalledGroup = `${run}-stalled`;
  const stalled = stalledJobs(run, stalledGroup);
  return {
    seed,
    stalledGroup,
    poisonRecords: POISON_RECORDS,
    givenUpEvents: givenUpEvents(run),
    toolJobs: [...poisonJobs(run, "tool_jobs", false), ...outage],
    fifoJobs: poisonJobs(run, "session_jobs", true),
    stalledJobs: stalled,
    failureQueuePoison: {
      body: NOT_A_FAILURE_RECORD,
      input: {
        kind: "poison-message",
        expect: DrillExpectation.Kept,
        queue: "stream_failures",
        reason: "not an on-failure record",
        body: NOT_A_FAILURE_RECORD,
      },
    },
  };
}

/** Why the drill's downstream jobs fail until it is back. */
const DOWN = "the drill's downstream answers 503 until it is back up";

/** A queue's poison messages, each kept in its DLQ. */
function poisonJobs(run: string, queue: DrillQueue, fifo: boolean): DrillMessage[] {
  // On the FIFO queue each poison message has a group of its own: in its DLQ each is then the first of its
  // group, which a peek shows (§3).
  return POISON_BODIES.map(({ reason, body }, i) => {
    const group = fifo ? `${run}-fifo-poison-${i}` : undefined;
    return {
      body,
      ...(group ? { group, deduplicationId: `${run}-poison-${i}` } : {}),
      input: {
        kind: "poison-message",
        expect: DrillExpectation.Kept,
        queue,
        reason,
        body,
        ...(group ? { group } : {}),
      },
    };
  });
}

/** Tool jobs whose downstream is down: SQS moves them to the tool DLQ after maxReceiveCount receives. */
function outageJobs(run: string): DrillMessage[] {
  return Array.from({ length: DRILL_SIZE.outageJobs }, (_, i): DrillMessage => {
    const callId = `${run}-outage-${i}`;
    const body = job(callId, `${run}-tools`, `/drill/outage/${i}`);
    return {
      body,
      input: {
        kind: "job",
        expect: DrillExpectation.Completed,
        queue: "tool_jobs",
        callId,
        body,
        fault: DOWN,
      },
    };
  });
}

/** One FIFO group: its first jobs call the downstream that is down, the jobs behind them wait (§3). */
function stalledJobs(run: string, stalledGroup: string): DrillMessage[] {
  return Array.from(
    { length: DRILL_SIZE.stalledHeads + DRILL_SIZE.stalledFollowers },
    (_, i): DrillMessage => {
      const head = i < DRILL_SIZE.stalledHeads;
      const callId = `${run}-stalled-${i}`;
      const body = job(callId, stalledGroup, head ? `/drill/stalled/${i}` : undefined);
      return {
        body,
        group: stalledGroup,
        deduplicationId: callId,
        input: {
          kind: "job",
          expect: DrillExpectation.Completed,
          queue: "session_jobs",
          callId,
          body,
          group: stalledGroup,
          fault: head
            ? DOWN
            : `waits behind ${stalledGroup}'s first ${DRILL_SIZE.stalledHeads} jobs (FIFO order, §3)`,
        },
      };
    },
  );
}

/** Valid events of one partition key, whose writes the processor's fault refuses until the stack is ready. */
function givenUpEvents(run: string): DrillPlan["givenUpEvents"] {
  const partitionKey = `${run}-stream`;
  return Array.from({ length: DRILL_SIZE.givenUpEvents }, (_, i) => {
    // STUCK_PREFIX: the processor's writes for these calls are throttled while the fault is on.
    const callId = `${STUCK_PREFIX}${run}-${i}`;
    const data = utf8.encode(
      encodeLifecycleEvent({
        specVersion: CURRENT_SPEC_VERSION,
        type: "tool_call.requested",
        eventId: `${run}-event-${i}`,
        callId,
        sessionId: partitionKey,
        tool: "text.stats",
        occurredAt: new Date().toISOString(),
        argumentsDigest: createHash("sha256").update(callId).digest("hex"),
      }),
    );
    return { callId, data, partitionKey };
  });
}

/** The drill's failures did not all reach their place within the bound; `missing` says which. */
export class DrillNotReadyError extends Error {
  readonly missing: readonly string[];
  constructor(missing: readonly string[], boundMs: number) {
    super(
      `the drill's failures were not all in place after ${Math.round(boundMs / 1000)} s (raise --timeout on a busy machine): ${missing.join("; ")}`,
    );
    this.name = "DrillNotReadyError";
    this.missing = missing;
  }
}

async function send(sqs: SQSClient, queueUrl: string, messages: readonly DrillMessage[]): Promise<void> {
  for (let i = 0; i < messages.length; i += 10) {
    const chunk = messages.slice(i, i + 10);
    const { Failed = [] } = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: chunk.map((m, n) => ({
          Id: String(n),
          MessageBody: m.body,
          ...(m.group ? { MessageGroupId: m.group, MessageDeduplicationId: m.deduplicationId } : {}),
        })),
      }),
    );
    if (Failed.length > 0) throw new Error(`SendMessageBatch refused ${Failed.length} drill messages`);
  }
}

/** Waits until `missing()` names nothing; throws DrillNotReadyError once `deadline` has passed. */
async function until(missing: () => Promise<string[]>, deadline: number, boundMs: number): Promise<void> {
  for (;;) {
    const left = await missing();
    if (left.length === 0) return;
    if (Date.now() > deadline) throw new DrillNotReadyError(left, boundMs);
    await sleep(250);
  }
}

export interface DrillOptions {
  readonly environment: string;
  /** How long the failures may take to reach their places. */
  readonly boundMs: number;
  readonly onProgress?: (line: string) => void;
}

/**
 * Puts the drill's inputs into a started stack and returns its ledger once every failure is in place:
 * the poison quarantined and dead-lettered, the given-up events in the quarantine, the outage jobs in
 * the tool DLQ, the stalled group's first job failed once. Then the processor's fault stops (the table
 * recovers); the downstream stays down until the stalled group's first jobs are in the FIFO DLQ
 * (`watchDownstream`).
 */
export async function setUpDrill(
  pipeline: LocalPipeline,
  downstream: DrillDownstream,
  plan: DrillPlan,
  options: DrillOptions,
): Promise<DrillLedger> {
  const say = options.onProgress ?? (() => {});
  const deadline = Date.now() + options.boundMs;
  const inPlace = (missing: () => Promise<string[]>) => until(missing, deadline, options.boundMs);

  say("drill: poison into the stream and every queue, jobs for a downstream that is down...");
  await sendPoisonAndOutage(pipeline, plan);
  await inPlace(() => poisonAndOutageMissing(pipeline, plan));

  say("drill: events whose writes the table refuses, until the processor's mapping gives up on them...");
  await putRecords(
    pipeline.kinesis,
    { streamName: pipeline.names.stream },
    plan.givenUpEvents.map((e) => ({ data: e.data, partitionKey: e.partitionKey })),
  );
  await inPlace(() => givenUpMissing(pipeline, plan));

  say(`drill: FIFO group ${plan.stalledGroup}, whose first jobs call the downstream...`);
  await send(pipeline.sqs, pipeline.queues.sessionJobs.url, plan.stalledJobs);
  await inPlace(async () =>
    downstream.requests("/drill/stalled/0") > 0 ? [] : [`${plan.stalledGroup}'s first job tried once`],
  );
  // The table recovers: a replay of the given-up events now applies them.
  pipeline.faultsActive = false;

  return drillLedger(pipeline, plan, options.environment);
}

/** What the quarantine holds, as `<reason code> <data>` (the data base64, as the quarantine keeps it). */
async function quarantined(pipeline: LocalPipeline): Promise<Set<string>> {
  const entries = await listQuarantine(pipeline.s3, pipeline.names.quarantineBucket);
  return new Set(entries.map((e) => `${e.record.reason.code} ${e.record.data}`));
}

/** The poison records into the stream, the poison and outage jobs into the queues. */
async function sendPoisonAndOutage(pipeline: LocalPipeline, plan: DrillPlan): Promise<void> {
  const { sqs, queues } = pipeline;
  await putRecords(
    pipeline.kinesis,
    { streamName: pipeline.names.stream },
    plan.poisonRecords.map((p) => ({ data: p.data, partitionKey: `drill-${plan.seed}-poison` })),
  );
  await send(sqs, queues.toolJobs.url, plan.toolJobs);
  await send(sqs, queues.sessionJobs.url, plan.fifoJobs);
  await send(sqs, queues.streamFailures.url, [plan.failureQueuePoison]);
}

/** The poison not yet quarantined or dead-lettered, the outage jobs not yet in the tool DLQ. */
async function poisonAndOutageMissing(pipeline: LocalPipeline, plan: DrillPlan): Promise<string[]> {
  const { sqs, queues } = pipeline;
  const toolDlqWanted = plan.toolJobs.length;
  const found = await quarantined(pipeline);
  const [tool, fifo, failures] = await Promise.all([
    queueDepth(sqs, queues.toolJobsDlq.url),
    queueDepth(sqs, queues.sessionJobsDlq.url),
    queueDepth(sqs, queues.streamFailuresDlq.url),
  ]);
  return [
    ...plan.poisonRecords
      .filter((p) => !found.has(`${p.reason} ${base64(p.data)}`))
      .map((p) => `a ${p.reason} record in the quarantine`),
    ...(tool < toolDlqWanted ? [`${toolDlqWanted - tool} of the tool jobs in the tool DLQ`] : []),
    ...(fifo < plan.fifoJobs.length ? ["the FIFO poison in the session-jobs DLQ"] : []),
    ...(failures < 1 ? ["the message that is not an on-failure record in the stream-failures DLQ"] : []),
  ];
}

/** The given-up events not yet in the quarantine. */
async function givenUpMissing(pipeline: LocalPipeline, plan: DrillPlan): Promise<string[]> {
  const found = await quarantined(pipeline);
  return plan.givenUpEvents
    .filter((e) => !found.has(`${FailureCondition.RetryAttemptsExhausted} ${base64(e.data)}`))
    .map((e) => `event ${e.callId} in the quarantine (${FailureCondition.RetryAttemptsExhausted})`);
}

/** The ledger drill:check judges: the stack's resources and where each input must end. */
function drillLedger(pipeline: LocalPipeline, plan: DrillPlan, environment: string): DrillLedger {
  const { queues, names } = pipeline;
  const queuesOf = (key: DrillQueue) => {
    const roles = {
      tool_jobs: "toolJobs",
      session_jobs: "sessionJobs",
      stream_failures: "streamFailures",
    } as const;
    const role = roles[key];
    return { url: queues[role].url, dlqUrl: queues[`${role}Dlq`].url };
  };
  return {
    formatVersion: DRILL_LEDGER_FORMAT,
    environment,
    region: pipeline.region,
    seed: plan.seed,
    createdAt: new Date().toISOString(),
    resources: {
      stream: names.stream,
      toolCallsTable: names.toolCallsTable,
      quarantineBucket: names.quarantineBucket,
      queues: {
        tool_jobs: queuesOf("tool_jobs"),
        session_jobs: queuesOf("session_jobs"),
        stream_failures: queuesOf("stream_failures"),
      },
    },
    stalledGroup: plan.stalledGroup,
    inputs: ledgerInputs(plan),
  };
}

/** Every input of the plan and where it must end. */
function ledgerInputs(plan: DrillPlan): DrillInput[] {
  return [
    ...plan.poisonRecords.map(
      (p): DrillInput => ({
        kind: "poison-record",
        expect: DrillExpectation.Kept,
        reason: p.reason,
        data: base64(p.data),
      }),
    ),
    ...plan.givenUpEvents.map(
      (e): DrillInput => ({
        kind: "event",
        expect: DrillExpectation.Applied,
        callId: e.callId,
        data: base64(e.data),
        fault: "the table throttled its writes until the stack was ready",
      }),
    ),
    ...[...plan.toolJobs, ...plan.fifoJobs, ...plan.stalledJobs, plan.failureQueuePoison].map((m) => m.input),
  ];
}

/**
 * Brings the downstream back up once the stalled group's first jobs have reached the FIFO DLQ (the
 * group then moves on), and says so; resolves then, or when `stopped` resolves first.
 */
export async function watchDownstream(
  pipeline: LocalPipeline,
  downstream: DrillDownstream,
  plan: DrillPlan,
  stopped: Promise<unknown>,
  say: (line: string) => void,
): Promise<void> {
  let done = false;
  void stopped.then(() => {
    done = true;
  });
  const wanted = plan.fifoJobs.length + DRILL_SIZE.stalledHeads;
  while (!done) {
    const depth = await queueDepth(pipeline.sqs, pipeline.queues.sessionJobsDlq.url).catch(() => 0);
    if (depth >= wanted) {
      downstream.up = true;
      say(
        `drill: ${plan.stalledGroup}'s first ${DRILL_SIZE.stalledHeads} jobs reached the session-jobs DLQ after maxReceiveCount receives and the group moved on; the downstream is back up: what waits in the DLQs can be redriven now`,
      );
      return;
    }
    await sleep(500);
  }
}

/** What the operator reads when the drill is ready: what was left where, and how to say done. */
export function drillBriefing(plan: DrillPlan): string {
  return [
    "drill ready: failures to recover, all made by the pipeline itself:",
    `  quarantine         ${plan.poisonRecords.length} permanent poison records (${plan.poisonRecords.map((p) => p.reason).join(", ")}),`,
    `                     ${plan.givenUpEvents.length} valid events the processor gave up on (${FailureCondition.RetryAttemptsExhausted}); the table is healthy again`,
    `  tool-jobs DLQ      ${POISON_BODIES.length} poison messages and ${DRILL_SIZE.outageJobs} valid jobs whose downstream was down`,
    `  session-jobs DLQ   ${POISON_BODIES.length} poison messages; next: ${plan.stalledGroup}'s first ${DRILL_SIZE.stalledHeads} jobs`,
    `  FIFO group         ${plan.stalledGroup} is stalled: its first jobs fail while the downstream is down, ${DRILL_SIZE.stalledFollowers} jobs wait behind them`,
    `  stream-failures DLQ  a message that is not an on-failure record`,
    "  the downstream comes back up once the stalled group's first jobs are in the DLQ (a line says so)",
    "done means: every valid input applied, every poison kept; check it with (in the shell that loaded the file):",
    "  npm run drill:check",
  ].join("\n");
}
