import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type KinesisEsmEvent,
  type KinesisEsmParameters,
  KinesisEventSource,
  laneOf,
  MAX_PAYLOAD_BYTES,
} from "../../src/index.js";
import {
  Emulators,
  eventually,
  heldInvocation,
  KINESIS_TEST_PARAMETERS,
  type Payload,
  RecordingFunction,
  stoppedAfterEach,
} from "../harness.js";

/**
 * What the shard reader beside its lanes (poller.ts `#readShard`, `#runLane`) promises about stopping and
 * memory (docs/local-runtime.md, aws-semantics §1.1-§1.3), each against kinesalite and the scripted function.
 * Both tests were written by a review of that change and failed before their fixes: a stop waited for a batch
 * retried without limit, and the data held past the checkpoint was bounded by a record count only.
 */

let emulators: Emulators;
const running = stoppedAfterEach();
beforeAll(async () => {
  emulators = await Emulators.start();
});
afterAll(() => emulators?.stop());

async function setup(options: {
  items: (Payload & { key?: string })[];
  parameters?: Partial<KinesisEsmParameters>;
  now?: () => number;
}) {
  const stream = await emulators.stream(1);
  const failures = await emulators.queue();
  const fn = new RecordingFunction();
  const sequences = await emulators.put(stream.name, options.items);
  const events: KinesisEsmEvent[] = [];
  const esm = new KinesisEventSource({
    kinesis: emulators.kinesis,
    streamName: stream.name,
    stream: {
      streamArn: stream.arn,
      region: "us-east-1",
      roleArn: "arn:aws:iam::000000000000:role/scripted",
    },
    function: { arn: fn.arn, invoke: (event) => fn.invoke(event) },
    parameters: { ...KINESIS_TEST_PARAMETERS, ...options.parameters },
    onFailure: { sqs: emulators.sqs, queueUrl: failures.url },
    pollIntervalMs: 50,
    shardRefreshMs: 100,
    retryDelayMs: () => 10,
    ...(options.now ? { now: options.now } : {}),
    onEvent: (event) => events.push(event),
  });
  running.push(esm, fn);
  esm.start();
  return { stream, fn, esm, sequences, events };
}

const SHARD = "shardId-000000000000";

describe("the Kinesis mapping stops while a batch is retried", () => {
  it("§1.3 stop returns while a batch is being retried without limit (MaximumRetryAttempts -1)", async () => {
    // A poison record with MaximumRetryAttempts -1 (AWS's default) is retried until it expires. A stop
    // must not wait for that: the batch in retry is not done, the checkpoint stays before it and a mapping
    // started again reads it again (§1.3 at least once). The clock is the test's, so that the record can
    // be made to expire after the assertion and the mapping ends (else the afterEach stop would hang too).
    let clock = Date.now();
    const { fn, esm } = await setup({
      items: [{ id: "poison", fail: "throw" }],
      parameters: {
        maximumRetryAttempts: -1,
        maximumRecordAgeMs: 3_600_000,
        reportBatchItemFailures: false,
      },
      now: () => clock,
    });
    await eventually(() => expect(fn.invocations.length).toBeGreaterThanOrEqual(2));

    // Act
    const stopped = esm.stop().then(() => "stopped" as const);
    const outcome = await Promise.race([
      stopped,
      new Promise<"still retrying">((r) => setTimeout(() => r("still retrying"), 5_000)),
    ]);
    const attemptsAfterFiveSeconds = fn.invocations.length;
    // Let the record expire so that the retries end and the test's own cleanup can stop the mapping.
    clock += 2 * 3_600_000;
    await stopped;

    // Assert
    expect(outcome, `${attemptsAfterFiveSeconds} attempts when the 5 s were up`).toBe("stopped");
  });
});

describe("the shard reader beside its lanes: bounded memory with a lane blocked", () => {
  it("§1.1 §1.2 with a lane blocked, the data read past the checkpoint stays within the bytes bound", async () => {
    // The reader waits for room once 12 MB a lane waits in the lanes (WAITING_BYTES_PER_LANE, two 6 MB
    // payloads) or four reads' worth of records is read past the checkpoint. Records another lane has done
    // stay held (with their data) until the blocked lane lets the checkpoint pass them, so the data held
    // past the checkpoint should stay within the bytes bound plus one read (Kinesis: 10 MB an answer), not
    // grow to four reads' worth of records of up to 1 MB each.
    const keys = Array.from({ length: 40 }, (_, i) => `key-${i}`);
    const blockedKey = keys.find((k) => laneOf(k, 2) === 0) as string;
    const freeKey = keys.find((k) => laneOf(k, 2) === 1) as string;
    const recordBytes = 500_000;
    const pad = "p".repeat(recordBytes);
    const held = await heldInvocation();
    const { stream, fn, esm, events } = await setup({
      items: [{ id: "held", touch: held.started, awaitFile: held.release, key: blockedKey }],
      parameters: { parallelizationFactor: 2, batchSize: 10 },
    });
    await held.hasStarted();
    // Six waves of 10 MB of the other lane's records (an AWS answer is at most 10 MB; kinesalite's is not
    // bounded in bytes, so each wave is put after the last was read): 60 MB in all. A wave not read
    // within 5 s is left unread: the reader waits for room.
    const perWave = 20;
    for (let wave = 0; wave < 6; wave++) {
      const before = esm.stats.polledRecords;
      await emulators.put(
        stream.name,
        Array.from({ length: perWave }, (_, i) => ({ id: `free${wave}-${i}`, pad, key: freeKey }) as Payload),
      );
      // Read and done by the free lane (so that what waits in the lanes stays under its own bound).
      const until = Date.now() + 5_000;
      const done = () => fn.seen.filter((id) => id.startsWith(`free${wave}-`)).length;
      while ((esm.stats.polledRecords < before + perWave || done() < perWave) && Date.now() < until)
        await new Promise((r) => setTimeout(r, 50));
    }

    // Assert: the checkpoint is held by the blocked lane, so everything read is past it.
    const readPastCheckpoint = esm.stats.polledRecords - 1;
    const heldBytes = readPastCheckpoint * recordBytes;
    const bound = 2 * 2 * MAX_PAYLOAD_BYTES + 10 * 1024 * 1024;
    const checkpointWhileBlocked = esm.checkpoints.get(SHARD);
    const reads = events.filter((e) => e.type === "read").length;
    const doneWhileBlocked = fn.seen.length;
    // Let the lane go before asserting, so that the mapping ends with every record done.
    await held.letGo();
    await eventually(() => expect(fn.seen).toHaveLength(1 + 6 * perWave));
    expect(checkpointWhileBlocked).toBeUndefined();
    expect(
      heldBytes,
      `read past the checkpoint in ${reads} reads, ${doneWhileBlocked} records done`,
    ).toBeLessThanOrEqual(bound);
  });
});
