/**
 * Which AWS API endpoint an integration suite talks to. By default the embedded emulators (fast, in
 * process); under the vitest project "moto" (MCP_TEST_AWS=moto, see vitest.config.ts) moto's server,
 * whose answers follow AWS where the emulators are kinder (docs/emulator-fidelity.md). A suite that
 * starts its endpoints through these functions runs unchanged against both.
 */
import type { DynamoDbDelays } from "./dynamodb-server.mjs";
import { type KinesisDelays, startDynamoDb, startKinesis, startSqsS3 } from "./embedded.js";
import type { RunningEmulator } from "./loopback.js";
import { startMoto } from "./moto.js";

export const AWS_BACKENDS = ["emulators", "moto"] as const;
export type AwsBackend = (typeof AWS_BACKENDS)[number];

/** The backend chosen by MCP_TEST_AWS; anything else than the two names is refused, not ignored. */
export function awsBackend(env: NodeJS.ProcessEnv = process.env): AwsBackend {
  const chosen = env.MCP_TEST_AWS ?? "emulators";
  if (!(AWS_BACKENDS as readonly string[]).includes(chosen)) {
    throw new Error(`MCP_TEST_AWS=${chosen}: expected one of ${AWS_BACKENDS.join(", ")}`);
  }
  return chosen as AwsBackend;
}

/** DynamoDB: dynalite, or moto's server (delays apply to dynalite only; moto's tables are ACTIVE at once). */
export function startDynamoDbEndpoint(delays: DynamoDbDelays = {}): Promise<RunningEmulator> {
  return awsBackend() === "moto" ? startMoto() : startDynamoDb(delays);
}

/** Kinesis: kinesalite, or moto's server. */
export function startKinesisEndpoint(delays: KinesisDelays = {}): Promise<RunningEmulator> {
  return awsBackend() === "moto" ? startMoto() : startKinesis(delays);
}

/** SQS and S3: fauxqs, or moto's server. */
export function startSqsS3Endpoint(): Promise<RunningEmulator> {
  return awsBackend() === "moto" ? startMoto() : startSqsS3();
}
