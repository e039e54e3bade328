import { waitUntilStreamExists } from "@aws-sdk/client-kinesis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type KinesisEsmParameters,
  KinesisEventSource,
  type KinesisFailureRecord,
  PartialSplitAccounting,
} from "../../src/index.js";
import {
  Emulators,
  eventually,
  KINESIS_TEST_PARAMETERS,
  RecordingFunction,
  stoppedAfterEach,
} from "../harness.js";

/**
 * A handler that stops at its deadline and reports the first unstarted record (as the processor does),
 * against a downstream that is only slow, per configuration (docs/batch-engine.md "A slow downstream and
 * the retry quota"; lint:config rule slow-downstream-exhausts-retries):
 * - bisect off (docs/aws-semantics.md §1.4 "Bisect off", AWS-recorded): each such answer uses one retry
 *   attempt, although nothing failed, and the tail of the batch goes to the on-failure destination once the
 *   attempts run out;
 * - bisect on (§1.4 "Bisect on"): each answer splits the batch at the reported record. AWS documents the
 *   split, not whether it uses an attempt: split-free (the documented wording, the local ESM's default)
 *   gets every record through; counts-attempt behaves as bisect off.
 */
let emulators: Emulators;
const running = stoppedAfterEach();
beforeAll(async () => {
  emulators = await Emulators.start();
});
afterAll(() => emulators?.stop());

const parameters: KinesisEsmParameters = { ...KINESIS_TEST_PARAMETERS, maximumRetryAttempts: 1 };

interface Configuration {
  readonly maximumRetryAttempts: number;
  readonly bisectBatchOnFunctionError: boolean;
  readonly partialSplitAccounting?: PartialSplitAccounting;
}

// Each record takes 600 ms and nothing starts with less than 1.5 s of the 3 s left: at most three records
// per invocation, fewer on a loaded machine. Eight records cannot finish in two invocations.
const RECORDS = Array.from({ length: 8 }, (_, i) => ({ id: `slow${i}`, sleepMs: 600 }));

async function run(configuration: Configuration) {
  const { partialSplitAccounting, ...chosen } = configuration;
  const stream = await emulators.stream();
  await waitUntilStreamExists({ client: emulators.kinesis, maxWaitTime: 120 }, { StreamName: stream.name });
  const failures = await emulators.queue();
  const fn = new RecordingFunction({ timeoutMs: 3_000, environment: { DEADLINE_MARGIN_MS: "1500" } });
  await emulators.put(stream.name, RECORDS);
  const esm = new KinesisEventSource({
    kinesis: emulators.kinesis,
    streamName: stream.name,
    stream: {
      streamArn: stream.arn,
      region: "us-east-1",
      roleArn: "arn:aws:iam::000000000000:role/scripted",
    },
    function: fn,
    parameters: { ...parameters, ...chosen },
    ...(partialSplitAccounting ? { partialSplitAccounting } : {}),
    onFailure: { sqs: emulators.sqs, queueUrl: failures.url },
    pollIntervalMs: 50,
    shardRefreshMs: 100,
    retryDelayMs: () => 10,
  });
  running.push(esm, fn);
  esm.start();
  return { fn, esm, failures };
}

/** Records a successful invocation finished: those before the one it reported (or all, if none). */
function finished(fn: RecordingFunction): string[] {
  return fn.invocations.flatMap((invocation) => {
    if (invocation.result.kind !== "ok") return [];
    const reported = JSON.parse(invocation.result.payload).batchItemFailures as { itemIdentifier: string }[];
    const stop =
      reported.length === 0
        ? invocation.ids.length
        : invocation.identifiers.indexOf(reported[0]?.itemIdentifier ?? "");
    return invocation.ids.slice(0, stop);
  });
}

/** The slow downstream uses up the retries: two invocations, each cut by the deadline, then the unstarted tail goes to the failure queue. */
async function expectTailDiscarded(configuration: Configuration): Promise<void> {
  const { fn, esm, failures } = await run(configuration);
  let records: KinesisFailureRecord[] = [];
  await eventually(async () => {
    records = [...records, ...((await emulators.drain(failures.url)) as KinesisFailureRecord[])];
    expect(records).toHaveLength(1);
  });
  const [record] = records as [KinesisFailureRecord];

  // No invocation failed: every one returned a partial response at its deadline.
  expect(fn.invocations).toHaveLength(2);
  expect(fn.invocations.every((i) => i.result.kind === "ok")).toBe(true);
  expect(esm.stats.functionErrors).toBe(0);
  expect(esm.stats.partialFailures).toBe(2);
  // Yet the records after the second cut are discarded as if they had failed twice.
  expect(record.requestContext).toMatchObject({
    condition: "RetryAttemptsExhausted",
    approximateInvokeCount: 2,
  });
  expect(record.responseContext?.functionError).toBeNull();
  // Where every record ended: finished by an invocation, or in the failure record's range; never both.
  const done = finished(fn);
  const ids = RECORDS.map((r) => r.id);
  const firstDiscarded = ids.length - record.KinesisBatchInfo.batchSize;
  expect(done).toEqual(ids.slice(0, firstDiscarded));
  expect(record.KinesisBatchInfo.batchSize).toBeGreaterThanOrEqual(2);
  const second = fn.invocations[1]?.result;
  const cut =
    second?.kind === "ok" ? JSON.parse(second.payload).batchItemFailures[0]?.itemIdentifier : undefined;
  expect(record.KinesisBatchInfo.startSequenceNumber).toBe(cut);
}

/** The slow downstream gets every record through: each deadline answer moved the checkpoint, nothing is discarded. */
async function expectEveryRecordProcessed(configuration: Configuration) {
  const { fn, esm } = await run(configuration);
  await eventually(() => expect(finished(fn)).toEqual(RECORDS.map((r) => r.id)), 170_000);
  expect(esm.stats.discardedRecords).toBe(0);
  expect(esm.stats.partialFailures).toBeGreaterThanOrEqual(2);
  expect(esm.stats.functionErrors).toBe(0);
  return esm;
}

describe('§1.4 "Bisect off": deadline-driven partial responses use up the retry quota (AWS-recorded)', () => {
  it("a slow downstream with MaximumRetryAttempts 1: two invocations, each cut by the deadline, then the unstarted tail goes to the failure queue", async () => {
    await expectTailDiscarded({ maximumRetryAttempts: 1, bisectBatchOnFunctionError: false });
  }, 180_000);

  it("the same slow downstream with enough retries (MaximumRetryAttempts 10): every record is processed, nothing reaches the failure queue", async () => {
    await expectEveryRecordProcessed({ maximumRetryAttempts: 10, bisectBatchOnFunctionError: false });
  }, 180_000);
});

describe('§1.4 "Bisect on": each deadline answer splits the batch; whether the split uses a retry is undocumented', () => {
  it("split-free (documented wording, the default): with MaximumRetryAttempts 1 every record is processed: the splits at the deadlines used no retry", async () => {
    const esm = await expectEveryRecordProcessed({
      maximumRetryAttempts: 1,
      bisectBatchOnFunctionError: true,
    });
    // Eight records, at most three an invocation: at least two splits, which with one retry allowed only
    // went through because they used none (counts-attempt, below, discards the tail after two).
    expect(esm.stats.partialSplits).toBeGreaterThanOrEqual(2);
  }, 180_000);

  it("counts-attempt: with MaximumRetryAttempts 1 the splits use up the retries as with bisect off, and the tail goes to the failure queue", async () => {
    await expectTailDiscarded({
      maximumRetryAttempts: 1,
      bisectBatchOnFunctionError: true,
      partialSplitAccounting: PartialSplitAccounting.CountsAttempt,
    });
  }, 180_000);
});
