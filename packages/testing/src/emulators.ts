/// <reference path="./dynalite.d.ts" />
/// <reference path="./kinesalite.d.ts" />
import dynalite from "dynalite";
import { startFauxqs } from "fauxqs";
import kinesalite from "kinesalite";
import { listenOnLoopback, type RunningEmulator } from "./loopback.js";

export { type FaultProxy, type PutRecordsEntryView, startKinesisFaultProxy } from "./kinesis-fault-proxy.js";
export type { RunningEmulator } from "./loopback.js";

/** DynamoDB (dynalite, in memory) on a free loopback port. */
export function startDynamoDb(): Promise<RunningEmulator> {
  return listenOnLoopback(dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 }));
}

/**
 * Kinesis (kinesalite, in memory) on a free loopback port. Streams become ACTIVE at once and shard
 * operations complete at once, so tests need not wait for status changes.
 */
export function startKinesis(): Promise<RunningEmulator> {
  return listenOnLoopback(
    kinesalite({ createStreamMs: 0, deleteStreamMs: 0, updateStreamMs: 0, shardLimit: 100 }),
  );
}

/** SQS, SNS and S3 (fauxqs, in memory) on a free loopback port. */
export async function startSqsS3(): Promise<RunningEmulator> {
  const server = await startFauxqs({ port: 0, host: "127.0.0.1", logger: false });
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
