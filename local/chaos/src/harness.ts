/**
 * Everything a chaos run stands up before it produces: the emulators (SQS restartable), the doors in front
 * of DynamoDB and S3, the witness (the jobs' downstream), the local pipeline with the injector and the
 * observers between its mappings and functions, and the harness's own clients, which go round the doors:
 * what the run reads is never a fault it injected.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { KinesisClient } from "@aws-sdk/client-kinesis";
import type { S3Client } from "@aws-sdk/client-s3";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { healthCheck, type RunningEmulator, startEmulatorThread } from "@mcp-pipeline/emulators";
import type { PartialSplitAccounting } from "@mcp-pipeline/local-runtime";
import {
  LocalPipeline,
  type PipelineOptions,
  queueAttributes,
  stuckRounds,
} from "@mcp-pipeline/local-runtime";
import { type EnvironmentSettings, resourceNames } from "@mcp-pipeline/settings";
import { type DoorCounts, startDynamoDbDoor, startS3Door } from "./doors.js";
import { type InvocationFaultCounts, invocationFaults } from "./injector.js";
import type { Ledger } from "./ledger.js";
import { observeInvocations, observeOutcomes } from "./observer.js";
import type { FaultPlan } from "./plan.js";
import { type RestartableSqs, startRestartableSqs } from "./sqs-restart.js";
import type { ProductionTimeline } from "./timeline.js";
import { startWitness, type Witness } from "./witness.js";

export interface HarnessOptions {
  readonly settings: EnvironmentSettings;
  readonly timeScale: number;
  readonly distDir: string;
  readonly say: (line: string) => void;
  readonly onLog?: (functionName: string, line: string) => void;
  readonly partialSplitAccounting?: PartialSplitAccounting;
  /** Records the production phase's timeline (--timeline); absent, nothing is recorded. */
  readonly timeline?: ProductionTimeline;
}

/** The faults' switches and counts, shared by the doors, the injector and the stuck writes. */
export interface FaultState {
  /** Faults on: the doors and the injector draw from the plan. */
  active: boolean;
  /** The replay round: a stuck event's writes are refused until the round it is released at. */
  round: number;
  readonly doors: DoorCounts;
  readonly invocations: InvocationFaultCounts;
  stuckWriteRefusals: number;
}

export interface Harness {
  readonly pipeline: LocalPipeline;
  readonly witness: Witness;
  readonly sqs: RestartableSqs;
  readonly faults: FaultState;
  /** The harness's own clients: straight to the emulators, round the doors. */
  readonly direct: {
    readonly dynamodb: DynamoDBClient;
    readonly s3: S3Client;
    readonly kinesis: KinesisClient;
  };
  /** The S3 client through the door: the operator's replay meets the faults too. */
  readonly s3ThroughDoor: S3Client;
  stop(): Promise<void>;
}

const credentials = { accessKeyId: "local", secretAccessKey: "local" };

/** SDK attempts per request of the operator's commands (the replay): see s3ThroughDoor. */
const OPERATOR_S3_ATTEMPTS = 8;

/** Call ids of the scenario's shapes (`call-…`, `job-…`, `fifo-…`, with the seed and an index). */
export function callIdsIn(text: string): string[] {
  return [...new Set(text.match(/\b(?:call|job|fifo)-\d+-\d+\b/g) ?? [])];
}

/**
 * The writes of stuck events are refused (a throttle, as a downstream that keeps refusing them) until
 * the replay round the event is released at: while faults are on, in the main phase all of them, in the
 * first replay those released only at the second, which are then given up again after their replay.
 */
function stuckWrites(faults: FaultState) {
  return (target: string, body: string) => {
    const refused =
      faults.active &&
      (target.endsWith(".PutItem") || target.endsWith(".TransactWriteItems")) &&
      stuckRounds(body).some((round) => round > faults.round);
    if (!refused) return undefined;
    faults.stuckWriteRefusals += 1;
    return {
      status: 400,
      type: "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
      message: "Throughput exceeded (a stuck event, injected by npm run chaos)",
    };
  };
}

function newFaultState(): FaultState {
  return {
    active: false,
    round: 0,
    doors: { dynamodbFaults: 0, dynamodbAfterWriteFaults: 0, s3Faults: 0, emulatorErrors: 0 },
    invocations: { throttles: 0, exceptions: 0, timeouts: 0 },
    stuckWriteRefusals: 0,
  };
}

/** The emulators and the witness, each pushed to `running` (stopped in reverse) once up. */
async function startEmulators(ledger: Ledger, running: RunningEmulator[]) {
  const [dynalite, kinesalite, s3Emulator, sqs, witness] = await Promise.all([
    startEmulatorThread("dynamodb"),
    startEmulatorThread("kinesis"),
    startEmulatorThread("sqs-s3"),
    startRestartableSqs((exchange) => ledger.holds.seen(exchange)),
    startWitness(),
  ]);
  running.push(dynalite, kinesalite, s3Emulator, sqs, witness);
  await Promise.all([
    healthCheck(dynalite.endpoint, "dynamodb"),
    healthCheck(kinesalite.endpoint, "kinesis"),
    healthCheck(sqs.endpoint, "sqs"),
  ]);
  return { dynalite, kinesalite, s3Emulator, sqs, witness };
}

type Emulators = Awaited<ReturnType<typeof startEmulators>>;
type Doors = Awaited<ReturnType<typeof startDoors>>;

/** The doors in front of DynamoDB and S3: the faults they inject and the writes they see go to the ledger. */
async function startDoors(
  plan: FaultPlan,
  ledger: Ledger,
  faults: FaultState,
  settings: EnvironmentSettings,
  emulators: Emulators,
  running: RunningEmulator[],
) {
  const names = resourceNames(settings.name_prefix);
  const doorOptions = {
    plan,
    active: () => faults.active,
    onEffect: (effect: Parameters<Parameters<typeof startDynamoDbDoor>[1]["onEffect"]>[0]) => {
      if (effect.kind === "call-write") ledger.callWritten(effect.write, Date.now());
      else ledger.quarantined(effect.sequenceNumber, effect.data);
    },
    onFault: (touch: Parameters<Ledger["fault"]>[0]) => ledger.fault(touch),
    onEmulatorError: (touch: Parameters<Ledger["emulatorError"]>[0]) => ledger.emulatorError(touch),
    callIdsIn,
    toolCallsTable: names.toolCallsTable,
    quarantineBucket: names.quarantineBucket,
  };
  const [dynamoDbDoor, s3Door] = await Promise.all([
    startDynamoDbDoor(emulators.dynalite.endpoint, doorOptions, faults.doors),
    startS3Door(emulators.s3Emulator.endpoint, doorOptions, faults.doors),
  ]);
  running.push(dynamoDbDoor, s3Door);
  return { dynamoDbDoor, s3Door };
}

/** What the Kinesis mapping meets that a run's reader should hear of: said as it happens. */
function sayKinesisEvents(say: (line: string) => void): NonNullable<PipelineOptions["onKinesisEvent"]> {
  return (e) => {
    if (e.type === "request-abandoned")
      say(
        `the Kinesis mapping's ${e.operation}${e.shardId ? ` (${e.shardId})` : ""} got no answer in ${e.boundMs} ms: abandoned, retrying`,
      );
    if (e.type === "destination-failed")
      say(
        `the Kinesis mapping could not deliver the failure record of ${e.record.KinesisBatchInfo.shardId} ${e.record.KinesisBatchInfo.startSequenceNumber}..${e.record.KinesisBatchInfo.endSequenceNumber} (${e.errorName}): its ${e.record.KinesisBatchInfo.batchSize} records are dropped, as AWS drops them (§6)`,
      );
  };
}

/** The Kinesis mapping's events to `say`, and to the timeline when one is recorded. */
function timelineToo(
  say: NonNullable<PipelineOptions["onKinesisEvent"]>,
  timeline: ProductionTimeline | undefined,
): NonNullable<PipelineOptions["onKinesisEvent"]> {
  if (!timeline) return say;
  return (e) => {
    say(e);
    timeline.onKinesisEvent(e);
  };
}

/** The local pipeline behind the doors, its invocations observed and faulted, its tools calling the witness. */
function newPipeline(
  plan: FaultPlan,
  ledger: Ledger,
  faults: FaultState,
  options: HarnessOptions,
  emulators: Emulators,
  doors: Doors,
): LocalPipeline {
  const inject = invocationFaults(
    plan,
    () => faults.active,
    faults.invocations,
    () => ledger.invocationFault(),
  );
  const observe = observeInvocations(ledger);
  const outcomes = observeOutcomes(
    ledger,
    options.settings,
    options.timeScale,
    new URL(emulators.witness.baseUrl).origin,
  );
  return new LocalPipeline({
    settings: options.settings,
    timeScale: options.timeScale,
    distDir: options.distDir,
    endpoints: {
      dynamodb: doors.dynamoDbDoor.endpoint,
      kinesis: emulators.kinesalite.endpoint,
      sqs: emulators.sqs.endpoint,
      s3: doors.s3Door.endpoint,
    },
    region: options.settings.region,
    onLog: options.onLog ?? (() => {}),
    onKinesisEvent: timelineToo(sayKinesisEvents(options.say), options.timeline),
    ...(options.timeline ? { onSqsEvent: options.timeline.onSqsEvent } : {}),
    // The observer stands outside the injector: it sees what the mapping hands over, once per try; the
    // outcomes are seen inside it, where the function's own result comes back. The timeline, when asked
    // for, times the whole invoke as the mapping waits for it.
    wrapInvoke: (name, invoke) => {
      const observed = observe(name, inject(name, outcomes(name, invoke)));
      return options.timeline ? options.timeline.wrapInvoke(name, observed) : observed;
    },
    processorDynamoDbFault: stuckWrites(faults),
    ...(options.partialSplitAccounting ? { partialSplitAccounting: options.partialSplitAccounting } : {}),
    extraEnvironment: {
      "tool-worker": { HTTP_TOOL_BASE_URL: emulators.witness.baseUrl },
      "fifo-worker": { HTTP_TOOL_BASE_URL: emulators.witness.baseUrl },
    },
  });
}

/** The harness's own clients, straight to the emulators, and the operator's S3 client through the door. */
function harnessClients(region: string, emulators: Emulators, doors: Doors) {
  const direct = {
    dynamodb: new DynamoDBClient({ endpoint: emulators.dynalite.endpoint, region, credentials }),
    s3: s3Client({ endpoint: emulators.s3Emulator.endpoint, region, credentials }, {}),
    // The project's factory: HTTP/1.1, which the emulator speaks (the SDK's default is HTTP/2).
    kinesis: kinesisClient({ endpoint: emulators.kinesalite.endpoint, region, credentials }),
  };
  // The operator's client. The door refuses one S3 request in ten; with the SDK's default three attempts
  // one request in a thousand still fails, and a replay reads the whole quarantine (a GET an object,
  // and a tag read for each replayed one), so at 4,000 objects hardly a listing got through. Eight attempts leave one in 10^8:
  // the faults still hit the replay, and the SDK's backoff meets them, as an operator's bulk command should.
  const s3ThroughDoor = s3Client(
    { endpoint: doors.s3Door.endpoint, region, credentials, maxAttempts: OPERATOR_S3_ATTEMPTS },
    {},
  );
  return { direct, s3ThroughDoor };
}

/** The FIFO stall measure: the visibility the queue gives a receive, as the local pipeline created it. */
function watchFifoHolds(ledger: Ledger, pipeline: LocalPipeline, options: HarnessOptions): void {
  ledger.holds.watch(
    pipeline.queues.sessionJobs.url,
    Number(
      queueAttributes(options.settings.fifo_worker.queue, true, options.timeScale).source.VisibilityTimeout,
    ) * 1000,
  );
}

export async function startHarness(
  plan: FaultPlan,
  ledger: Ledger,
  options: HarnessOptions,
): Promise<Harness> {
  const running: RunningEmulator[] = [];
  const stopAll = async () => {
    for (const r of running.reverse()) await r.stop().catch(() => undefined);
  };
  const faults = newFaultState();
  let pipeline: LocalPipeline | undefined;
  try {
    const emulators = await startEmulators(ledger, running);
    const doors = await startDoors(plan, ledger, faults, options.settings, emulators, running);
    pipeline = newPipeline(plan, ledger, faults, options, emulators, doors);
    await pipeline.start();
    const started = pipeline;
    watchFifoHolds(ledger, started, options);
    const { direct, s3ThroughDoor } = harnessClients(options.settings.region, emulators, doors);
    return {
      pipeline: started,
      witness: emulators.witness,
      sqs: emulators.sqs,
      faults,
      direct,
      s3ThroughDoor,
      stop: async () => {
        await started.stop();
        for (const client of [...Object.values(direct), s3ThroughDoor]) client.destroy();
        await stopAll();
      },
    };
  } catch (error) {
    await pipeline?.stop();
    await stopAll();
    throw error;
  }
}
