import { SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll } from "vitest";
import { emulatorClientOptions, startSqsS3 } from "../embedded.js";
import type { RunningEmulator } from "../loopback.js";

/** The SQS emulator of a test file and a client on it, available once the file's `beforeAll` has run. */
export interface SqsSuite {
  readonly emulator: RunningEmulator;
  readonly sqs: SQSClient;
}

/**
 * Starts an SQS (and S3) emulator for the calling test file, with a client on it, and stops both after
 * the file's last test. Call at the top of a file; read `emulator` and `sqs` inside tests and hooks.
 */
export function sqsSuite(): SqsSuite {
  let emulator: RunningEmulator | undefined;
  let sqs: SQSClient | undefined;
  beforeAll(async () => {
    emulator = await startSqsS3();
    sqs = new SQSClient(emulatorClientOptions(emulator));
  });
  afterAll(async () => {
    sqs?.destroy();
    await emulator?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined)
      throw new Error("sqsSuite: read before the file's beforeAll started the emulator");
    return value;
  };
  return {
    get emulator() {
      return started(emulator);
    },
    get sqs() {
      return started(sqs);
    },
  };
}
