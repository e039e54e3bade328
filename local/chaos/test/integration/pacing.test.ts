import { OrderingMode, putRecords } from "@mcp-pipeline/aws";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { createStreamWhenActive, type RunningEmulator, startKinesis } from "@mcp-pipeline/emulators";
import {
  type InvokeResult,
  KinesisEventSource,
  type KinesisFailureRecord,
} from "@mcp-pipeline/local-runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger.js";
import { observeInvocations } from "../../src/observer.js";

let kinesalite: RunningEmulator;
beforeAll(async () => {
  kinesalite = await startKinesis();
});
afterAll(() => kinesalite?.stop());

const ok: InvokeResult = { kind: "ok", payload: "null", durationMs: 1, maxMemoryUsedMb: 1, requestId: "r" };

describe("the producer's pacing", () => {
  it("counts records the Kinesis mapping gave up for their age, which the processor never receives (§1.3, §9.1 item 4)", async () => {
    // Prepare: 30 records in a 2-shard stream, recorded in the ledger as the chaos producer does.
    const kinesis = kinesisClient({
      endpoint: kinesalite.endpoint,
      region: "us-east-1",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
    });
    const streamName = "pacing";
    await createStreamWhenActive(kinesis, { StreamName: streamName, ShardCount: 2 });
    const ledger = new Ledger();
    const records = Array.from({ length: 30 }, (_, i) => ({
      data: new TextEncoder().encode(JSON.stringify({ n: i })),
      partitionKey: `key-${i % 6}`,
    }));
    const put = await putRecords(kinesis, { streamName }, records, { ordering: OrderingMode.Strict });
    expect(put.rejected).toEqual([]);
    for (const w of put.written)
      ledger.recordStream({
        kind: "event",
        key: (records[w.index] as (typeof records)[number]).partitionKey,
        shardId: w.shardId,
        sequenceNumber: w.sequenceNumber,
        event: {
          eventId: `ev-${w.index}`,
          callId: `c-${w.index}`,
          type: "tool_call.requested",
          occurredAt: "",
        },
      });

    // The mapping's clock is two hours ahead: every record it reads is past MaximumRecordAge (60 s), so
    // it leaves its batch before any invocation, as on a machine so loaded that the backlog outlives it.
    // The failure records reach the ledger as in a chaos run: through dlq-redrive's observed invocation.
    const observe = observeInvocations(ledger);
    let processorInvocations = 0;
    const processor = observe("processor", async () => {
      processorInvocations += 1;
      return ok;
    });
    const dlqRedrive = observe("dlq-redrive", async () => ok);
    let givenUp = 0;
    let allGivenUp: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      allGivenUp = resolve;
    });
    const esm = new KinesisEventSource({
      kinesis,
      streamName,
      stream: {
        streamArn: "arn:aws:kinesis:us-east-1:000000000000:stream/pacing",
        region: "us-east-1",
        roleArn: "arn:aws:iam::000000000000:role/processor",
      },
      function: { arn: "arn:aws:lambda:us-east-1:000000000000:function:processor", invoke: processor },
      parameters: {
        batchSize: 10,
        batchingWindowMs: 0,
        parallelizationFactor: 2,
        startingPosition: "TRIM_HORIZON",
        maximumRetryAttempts: 3,
        maximumRecordAgeMs: 60_000,
        bisectBatchOnFunctionError: true,
        reportBatchItemFailures: true,
      },
      pollIntervalMs: 50,
      shardRefreshMs: 100,
      now: () => Date.now() + 2 * 3_600_000,
      onEvent: (event) => {
        if (event.type !== "discarded") return;
        const record: KinesisFailureRecord = event.record;
        void dlqRedrive({
          Records: [{ messageId: record.requestContext.requestId, body: JSON.stringify(record) }],
        }).then(() => {
          givenUp += record.KinesisBatchInfo.batchSize;
          if (givenUp === records.length) allGivenUp();
        });
      },
    });

    // Act: the mapping reads every record and gives each up.
    esm.start();
    try {
      await done;
    } finally {
      await esm.stop();
      kinesis.destroy();
    }

    // Assess: nothing was delivered, yet nothing is ahead of the mapping any more; a producer pacing on
    // deliveries (30 produced, 0 delivered) would wait for records that will never be delivered.
    expect(processorInvocations).toBe(0);
    expect(ledger.producedStream).toBe(30);
    expect(ledger.deliveredStream).toBe(0);
    expect(ledger.streamBacklog).toBe(0);
  });
});
