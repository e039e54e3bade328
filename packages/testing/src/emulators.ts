/// <reference path="./dynalite.d.ts" />
import type { AddressInfo } from "node:net";
import dynalite from "dynalite";
import { startFauxqs } from "fauxqs";

export interface RunningEmulator {
  /** http://127.0.0.1:<port> */
  readonly endpoint: string;
  stop(): Promise<void>;
}

/** DynamoDB (dynalite, in memory) on a free loopback port. */
export async function startDynamoDb(): Promise<RunningEmulator> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error?: Error) => (error ? reject(error) : resolve()));
      }),
  };
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
