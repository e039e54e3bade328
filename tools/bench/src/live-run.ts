/**
 * One run of the default `npm start` scenario for the processor benchmark: the whole local pipeline
 * (function bundles from dist/ in their sandboxes, the local ESMs, the emulators), with the processor's
 * DynamoDB requests counted at the proxy in front of the emulator (local/runtime/src/pipeline/processor-traffic.ts),
 * and afterwards the stream as the run left it, read from TRIM_HORIZON shard by shard.
 */
import { join } from "node:path";
import { GetRecordsCommand, GetShardIteratorCommand, ListShardsCommand } from "@aws-sdk/client-kinesis";
import {
  buildScenario,
  LocalPipeline,
  type ProcessorTrafficCounts,
  parseCli,
  runScenario,
  type Summary,
  stuckWrites,
} from "@mcp-pipeline/local-runtime";
import type { EnvironmentSettings } from "@mcp-pipeline/settings";

/** A record of the stream, as GetRecords returned it. */
export interface StreamRecord {
  readonly shardId: string;
  readonly sequenceNumber: string;
  readonly partitionKey: string;
  readonly data: Uint8Array;
}

export interface LiveRun {
  /** The dev batching window this run used, in (unscaled) seconds. */
  readonly batchingWindowSeconds: number;
  readonly timeScale: number;
  readonly traffic: ProcessorTrafficCounts;
  readonly summary: Summary;
  /** Every shard's records in stream order, shards in ListShards order. */
  readonly shards: readonly (readonly StreamRecord[])[];
}

async function readStream(pipeline: LocalPipeline): Promise<StreamRecord[][]> {
  const { Shards = [] } = await pipeline.kinesis.send(
    new ListShardsCommand({ StreamName: pipeline.names.stream }),
  );
  const shards: StreamRecord[][] = [];
  for (const shard of Shards) {
    const shardId = shard.ShardId ?? "";
    const records: StreamRecord[] = [];
    let { ShardIterator: iterator } = await pipeline.kinesis.send(
      new GetShardIteratorCommand({
        StreamName: pipeline.names.stream,
        ShardId: shardId,
        ShardIteratorType: "TRIM_HORIZON",
      }),
    );
    // The pipeline is idle: the shard ends at the first empty answer (kinesalite has no record limit per second).
    while (iterator) {
      const page = await pipeline.kinesis.send(
        new GetRecordsCommand({ ShardIterator: iterator, Limit: 10_000 }),
      );
      const got = page.Records ?? [];
      for (const r of got) {
        records.push({
          shardId,
          sequenceNumber: r.SequenceNumber ?? "",
          partitionKey: r.PartitionKey ?? "",
          data: r.Data ?? new Uint8Array(),
        });
      }
      if (got.length === 0) break;
      iterator = page.NextShardIterator;
    }
    shards.push(records);
  }
  return shards;
}

/**
 * Runs the default scenario (`npm start` without options) with the given dev batching window, then
 * reads the stream. The window is the only setting changed, and only for this run.
 */
export async function liveRun(
  root: string,
  settings: EnvironmentSettings,
  batchingWindowSeconds: number,
  run: { readonly timeoutSeconds: number; readonly timeScale?: number },
): Promise<LiveRun> {
  // The default scenario; only the deadline is longer than npm start's, so a loaded machine still finishes,
  // and the time scale may be lower (longer function timeouts) on a machine too loaded for ÷10.
  const options = parseCli([
    "--timeout",
    String(run.timeoutSeconds),
    ...(run.timeScale === undefined ? [] : ["--time-scale", String(run.timeScale)]),
  ]);
  const tuned: EnvironmentSettings = {
    ...settings,
    processor: {
      ...settings.processor,
      esm: { ...settings.processor.esm, maximum_batching_window_in_seconds: batchingWindowSeconds },
    },
  };
  const pipeline = new LocalPipeline({
    settings: tuned,
    region: settings.region,
    timeScale: options.timeScale,
    distDir: join(root, "dist"),
    ...((options.scenario.stuckRate ?? 0) > 0 ? { processorDynamoDbFault: stuckWrites } : {}),
  });
  try {
    await pipeline.start();
    let printed = 0;
    const summary = await runScenario(pipeline, buildScenario(options.scenario), {
      environment: options.env,
      timeScale: options.timeScale,
      timeoutMs: options.timeoutMs,
      onProgress: (p) => {
        if (p.elapsedMs - printed < 10_000) return;
        printed = p.elapsedMs;
        process.stderr.write(
          `  live run: ${(p.elapsedMs / 1000).toFixed(0)} s, ${p.accounted}/${p.expected} accounted\n`,
        );
      },
    });
    if (summary.timedOut || summary.lost !== 0) {
      throw new Error(
        `the live run did not finish cleanly (lost ${summary.lost}, timed out: ${summary.timedOut}): ${summary.missing.join(", ")}`,
      );
    }
    const traffic = pipeline.processorTraffic.counts();
    const shards = await readStream(pipeline);
    return { batchingWindowSeconds, timeScale: options.timeScale, traffic, summary, shards };
  } finally {
    await pipeline.stop();
  }
}
