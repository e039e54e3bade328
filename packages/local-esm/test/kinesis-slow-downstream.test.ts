import { waitUntilStreamExists } from "@aws-sdk/client-kinesis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KinesisEsmParameters, KinesisEventSource, type KinesisFailureRecord } from "../src/index.js";
import {
  Emulators,
  eventually,
  KINESIS_TEST_PARAMETERS,
  RecordingFunction,
  stoppedAfterEach,
} from "./harness.js";

/**
 * docs/aws-semantics.md §1.4 "Partial failures count as retries": a handler that stops at its deadline and
 * reports the first unstarted record (as the processor does) uses one retry attempt per invocation,
 * although nothing failed. A downstream that is only slow then sends the tail of a batch to the
 * on-failure destination once the attempts run out (docs/batch-engine.md "A slow downstream and the
 * retry quota"; lint:config rule slow-downstream-exhausts-retries).
 */
let emulators: Emulators;
const running = stoppedAfterEach();
beforeAll(async () => {
  emulators = await Emulators.start();
});
afterAll(() => emulators?.stop());

const parameters: KinesisEsmParameters = {
  ...KINESIS_TEST_PARAMETERS,
  maximumRetryAttempts: 1,
  bisectBatchOnFunctionError: true,
};

// Each record takes 600 ms and nothing starts with less than 1.5 s of the 3 s left: at most three records
// per invocation, fewer on a loaded machine. Eight records cannot finish in two invocations.
const RECORDS = Array.from({ length: 8 }, (_, i) => ({ id: `slow${i}`, sleepMs: 600 }));

async function run(maximumRetryAttempts: number) {
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
    parameters: { ...parameters, maximumRetryAttempts },
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

describe("§1.4 deadline-driven partial responses use up the retry quota", () => {
  it("a slow downstream with MaximumRetryAttempts 1: two invocations, each cut by the deadline, then the unstarted tail goes to the failure queue", async () => {
    const { fn, esm, failures } = await run(1);
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
  }, 180_000);

  it("the same slow downstream with enough retries (MaximumRetryAttempts 10): every record is processed, nothing reaches the failure queue", async () => {
    const { fn, esm } = await run(10);
    await eventually(() => expect(finished(fn)).toEqual(RECORDS.map((r) => r.id)), 170_000);
    expect(esm.stats.discardedRecords).toBe(0);
    expect(esm.stats.partialFailures).toBeGreaterThanOrEqual(2);
    expect(esm.stats.functionErrors).toBe(0);
  }, 180_000);
});
