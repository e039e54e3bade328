/**
 * The embedded emulators: dynalite, kinesalite and fauxqs (SQS and S3) in process or on a worker thread,
 * on loopback ports, with the waits that tell when each answers.
 */
/// <reference path="./dynalite.d.ts" />
/// <reference path="./kinesalite.d.ts" />
import { Worker } from "node:worker_threads";
import kinesalite from "kinesalite";
import { createDynamoDbServer, type DynamoDbDelays } from "./dynamodb-server.mjs";
import { startFauxqsWithS3Fidelity } from "./fauxqs-s3.mjs";
import { listenOnLoopback, type RunningEmulator } from "./loopback.js";
import { type AwsJsonCall, AwsJsonContentType, callAwsJson } from "./proxy.js";
import { threadExecArgv } from "./thread-exec-argv.js";

/** How long kinesalite keeps a stream CREATING, DELETING or UPDATING (after a shard change). */
export interface KinesisDelays {
  readonly createStreamMs?: number;
  readonly deleteStreamMs?: number;
  readonly updateStreamMs?: number;
}

/**
 * Status delays for the emulators. AWS takes seconds to turn a table or stream ACTIVE; the emulators
 * default to no delay, and tests that prove the waiting (local/emulators/src/ready.ts) set some.
 */
export interface EmulatorDelays {
  readonly dynamodb?: DynamoDbDelays;
  readonly kinesis?: KinesisDelays;
}

/** DynamoDB (dynalite, in memory, with Time to Live settings) on a free loopback port. */
export function startDynamoDb(delays: DynamoDbDelays = {}): Promise<RunningEmulator> {
  return listenOnLoopback(createDynamoDbServer(delays));
}

/**
 * Kinesis (kinesalite, in memory) on a free loopback port. By default streams become ACTIVE at once;
 * callers still wait for ACTIVE (waitForStreamActive), as on AWS, and tests set delays to prove it.
 */
export function startKinesis(delays: KinesisDelays = {}): Promise<RunningEmulator> {
  return listenOnLoopback(
    kinesalite({ createStreamMs: 0, deleteStreamMs: 0, updateStreamMs: 0, shardLimit: 100, ...delays }),
  );
}

/**
 * SQS, SNS and S3 (fauxqs, in memory) on a free loopback port, with S3's object tags and conditional
 * writes, which fauxqs lacks (fauxqs-s3.mjs).
 */
export async function startSqsS3(): Promise<RunningEmulator> {
  const server = await startFauxqsWithS3Fidelity();
  return { endpoint: server.address, stop: () => server.stop() };
}

/** Client options that reach an emulator: its endpoint, a region, and dummy credentials it accepts. */
export function emulatorClientOptions(emulator: RunningEmulator) {
  return {
    endpoint: emulator.endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
  } as const;
}

/** The three emulators of a local stack, each health-checked before use. */
export interface EmbeddedEmulators {
  readonly dynamodb: EmulatorThread;
  readonly kinesis: EmulatorThread;
  /** SQS and S3 share one fauxqs server. */
  readonly sqsS3: EmulatorThread;
  stop(): Promise<void>;
}

const HEALTH_CALLS = {
  dynamodb: {
    target: "DynamoDB_20120810.ListTables",
    contentType: AwsJsonContentType.V1_0,
    service: "dynamodb",
  },
  kinesis: {
    target: "Kinesis_20131202.ListStreams",
    contentType: AwsJsonContentType.V1_1,
    service: "kinesis",
  },
  sqs: { target: "AmazonSQS.ListQueues", contentType: AwsJsonContentType.V1_0, service: "sqs" },
} as const satisfies Record<string, AwsJsonCall>;

/** One real API call (a List operation) must answer 200 before an emulator counts as up. */
export async function healthCheck(endpoint: string, kind: keyof typeof HEALTH_CALLS): Promise<void> {
  const response = await callAwsJson(endpoint, HEALTH_CALLS[kind]);
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`${kind} emulator at ${endpoint} answered ${response.status}`);
}

/** Requests an emulator answered, by operation (X-Amz-Target, or the S3 method and "object"/"bucket"). */
export type RequestCounts = Readonly<Record<string, number>>;

/** An emulator in its own thread, which counts the requests it answers. */
export interface EmulatorThread extends RunningEmulator {
  requests(): Promise<RequestCounts>;
  /** How long the emulator's thread has been busy (its event loop not idle) since it started, in ms. */
  busyMs(): Promise<number>;
}

/** Starts one emulator in its own worker thread; stopping it closes the server, then the thread. */
export function startEmulatorThread(
  kind: "dynamodb" | "kinesis" | "sqs-s3",
  delays: EmulatorDelays = {},
): Promise<EmulatorThread> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./emulator-host.mjs", import.meta.url), {
      workerData: { kind, delays },
      execArgv: threadExecArgv(),
    });
    /** Waits for the host's next answer of one kind (the host answers in the order it is asked). */
    const answer = <T>(key: string) =>
      new Promise<T>((done) => {
        const listener = (message: Record<string, unknown>) => {
          if (!(key in message)) return;
          worker.off("message", listener);
          done(message[key] as T);
        };
        worker.on("message", listener);
      });
    worker.once("error", reject);
    void answer<string>("endpoint").then((endpoint) => {
      worker.off("error", reject);
      resolve({
        endpoint,
        requests: () => {
          const counts = answer<RequestCounts>("requests");
          worker.postMessage("requests");
          return counts;
        },
        busyMs: () => {
          const busy = answer<number>("busy");
          worker.postMessage("busy");
          return busy;
        },
        stop: () =>
          new Promise<void>((done) => {
            const timer = setTimeout(() => void worker.terminate().then(() => done()), 2_000);
            void answer("stopped").then(() => {
              clearTimeout(timer);
              void worker.terminate().then(() => done());
            });
            worker.postMessage("stop");
          }),
      });
    });
  });
}

/**
 * Starts dynalite, kinesalite and fauxqs on free loopback ports, in memory (nothing is written to
 * disk), each in its own thread so that they use more than one core.
 */
export async function startEmulators(delays: EmulatorDelays = {}): Promise<EmbeddedEmulators> {
  const started: RunningEmulator[] = [];
  const stopAll = () => Promise.all(started.map((e) => e.stop())).then(() => undefined);
  try {
    const track = (emulator: EmulatorThread) => {
      started.push(emulator);
      return emulator;
    };
    const [dynamodb, kinesis, sqsS3] = await Promise.all([
      startEmulatorThread("dynamodb", delays).then(track),
      startEmulatorThread("kinesis", delays).then(track),
      startEmulatorThread("sqs-s3").then(track),
    ]);
    await Promise.all([
      healthCheck(dynamodb.endpoint, "dynamodb"),
      healthCheck(kinesis.endpoint, "kinesis"),
      healthCheck(sqsS3.endpoint, "sqs"),
    ]);
    return { dynamodb, kinesis, sqsS3, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
