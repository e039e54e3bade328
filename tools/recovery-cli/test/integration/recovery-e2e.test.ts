import { rm } from "node:fs/promises";
import { join } from "node:path";
import { DeleteTableCommand, GetItemCommand } from "@aws-sdk/client-dynamodb";
import {
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListShardsCommand,
  PutRecordsCommand,
} from "@aws-sdk/client-kinesis";
import { ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { CURRENT_SPEC_VERSION, encodeLifecycleEvent } from "@mcp-pipeline/contracts";
import { createTableWhenActive } from "@mcp-pipeline/emulators";
import { bundleAll } from "@mcp-pipeline/emulators/testing";
import { LocalPipeline } from "@mcp-pipeline/local-runtime";
import { listQuarantine } from "@mcp-pipeline/recovery";
import { loadSettings } from "@mcp-pipeline/settings";
import { toolCallsTableDefinition } from "@mcp-pipeline/tool-calls";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { main as recover } from "../../src/index.js";
import { statsJob } from "../run-recover.js";

const root = join(import.meta.dirname, "../../../..");
let dist: string;
let pipeline: LocalPipeline;

async function eventually<T>(check: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** Every record the stream holds, read from each shard's start to its tip. */
async function streamRecordCount(): Promise<number> {
  const { kinesis, names } = pipeline;
  const { Shards = [] } = await kinesis.send(new ListShardsCommand({ StreamName: names.stream }));
  let count = 0;
  for (const shard of Shards) {
    let { ShardIterator: iterator } = await kinesis.send(
      new GetShardIteratorCommand({
        StreamName: names.stream,
        ShardId: shard.ShardId,
        ShardIteratorType: "TRIM_HORIZON",
      }),
    );
    while (iterator) {
      const page = await kinesis.send(new GetRecordsCommand({ ShardIterator: iterator }));
      count += page.Records?.length ?? 0;
      if ((page.Records?.length ?? 0) === 0 && page.MillisBehindLatest === 0) break;
      iterator = page.NextShardIterator;
    }
  }
  return count;
}

/** Runs the recovery CLI against the running stack, as an operator would with the --serve variables. */
async function cli(argv: string[]): Promise<{ code: number; out: string }> {
  const env: Record<string, string> = {
    AWS_REGION: pipeline.region,
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_ENDPOINT_URL_KINESIS: pipeline.endpoints.kinesis,
    AWS_ENDPOINT_URL_SQS: pipeline.endpoints.sqs,
    AWS_ENDPOINT_URL_S3: pipeline.endpoints.s3,
    // fauxqs answers STS too: the caller's account, which replay and redrive check before acting.
    AWS_ENDPOINT_URL_STS: pipeline.endpoints.sqs,
    QUARANTINE_BUCKET: pipeline.names.quarantineBucket,
    STREAM_NAME: pipeline.names.stream,
    TOOL_JOBS_DLQ_URL: pipeline.queues.toolJobsDlq.url,
    TOOL_JOBS_QUEUE_URL: pipeline.queues.toolJobs.url,
  };
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  let out = "";
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((c) => {
    out += String(c);
    return true;
  });
  try {
    return { code: await recover(argv, process.env), out };
  } finally {
    spy.mockRestore();
    vi.unstubAllEnvs();
  }
}

const call = async (callId: string) => {
  const { Item } = await pipeline.dynamodb.send(
    new GetItemCommand({
      TableName: pipeline.names.toolCallsTable,
      Key: { callId: { S: callId } },
      ConsistentRead: true,
    }),
  );
  return Item ? unmarshall(Item) : undefined;
};

beforeAll(async () => {
  dist = await bundleAll();
  const dev = await loadSettings(root, "dev");
  // One retry, so the failing records reach the failure queue quickly (N retries = N+1 invocations, §1.3).
  const settings = {
    ...dev,
    processor: { ...dev.processor, esm: { ...dev.processor.esm, maximum_retry_attempts: 1 } },
  };
  pipeline = new LocalPipeline({ settings, timeScale: 10, distDir: dist });
  await pipeline.start();
}, 180_000);
afterAll(async () => {
  await pipeline?.stop();
  await rm(dist, { recursive: true, force: true });
});

describe("nothing that failed is out of reach (end to end through the local runtime)", () => {
  it("records failing beyond MaximumRetryAttempts: failure queue, then dlq-redrive stores them, then replay applies them once", async () => {
    // The table disappears: every write fails transiently, the ESM retries, then gives up (§1.3, §1.6).
    await pipeline.dynamodb.send(new DeleteTableCommand({ TableName: pipeline.names.toolCallsTable }));
    const callIds = ["replayed-1", "replayed-2", "replayed-3"];
    await pipeline.kinesis.send(
      new PutRecordsCommand({
        StreamName: pipeline.names.stream,
        Records: callIds.map((callId, i) => ({
          PartitionKey: `session-${i}`,
          Data: new TextEncoder().encode(
            encodeLifecycleEvent({
              specVersion: CURRENT_SPEC_VERSION,
              type: "tool_call.requested",
              eventId: `replay-event-${i}`,
              callId,
              sessionId: `session-${i}`,
              tool: "text.stats",
              occurredAt: new Date().toISOString(),
              argumentsDigest: "1".repeat(64),
            }),
          ),
        })),
      }),
    );
    const quarantined = await eventually(async () => {
      const entries = await listQuarantine(pipeline.s3, pipeline.names.quarantineBucket, {
        reason: "RetryAttemptsExhausted",
      });
      expect(entries).toHaveLength(3);
      return entries;
    });
    expect(pipeline.kinesisEsm?.stats.discardedRecords).toBeGreaterThanOrEqual(3);
    expect(quarantined[0]?.record.failure).toMatchObject({
      condition: "RetryAttemptsExhausted",
      approximateInvokeCount: 2,
    });

    // Fixed: the table is back. Replay puts the records into the stream again.
    await createTableWhenActive(pipeline.dynamodb, toolCallsTableDefinition(pipeline.names.toolCallsTable));
    const dry = await cli(["replay", "--reason", "RetryAttemptsExhausted", "--dry-run"]);
    expect(dry).toMatchObject({ code: 0 });
    expect(dry.out).toContain("3 would be replayed");
    const first = await cli(["replay", "--reason", "RetryAttemptsExhausted", "--rate", "50", "--yes"]);
    expect(first.out).toContain("3 replayed into");
    const versions = await eventually(async () => {
      const items = await Promise.all(callIds.map(call));
      expect(items.map((i) => i?.status)).toEqual(["requested", "requested", "requested"]);
      return items.map((i) => i?.version);
    });

    // A second replay puts nothing into the stream, so nothing can be applied twice.
    const before = await streamRecordCount();
    const second = await cli(["replay", "--reason", "RetryAttemptsExhausted", "--yes"]);
    expect(second.out).toContain("3 already replayed; 0 to put back");
    expect(second.out).toContain("nothing to replay");
    expect(await streamRecordCount()).toBe(before);
    expect((await Promise.all(callIds.map(call))).map((i) => i?.version)).toEqual(versions);

    const inspect = await cli(["inspect", "--json"]);
    expect(JSON.parse(inspect.out)).toMatchObject({ byReason: { RetryAttemptsExhausted: 3 } });
  }, 180_000);

  it("a malformed message in the failure queue is kept in its DLQ with the reason, not lost", async () => {
    await pipeline.sqs.send(
      new SendMessageCommand({
        QueueUrl: pipeline.queues.streamFailures.url,
        MessageBody: '{"not":"a failure record"}',
      }),
    );
    const kept = await eventually(async () => {
      const { Messages = [] } = await pipeline.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: pipeline.queues.streamFailuresDlq.url,
          MessageAttributeNames: ["All"],
          VisibilityTimeout: 60,
        }),
      );
      expect(Messages).toHaveLength(1);
      return Messages[0];
    });
    expect(kept?.Body).toBe('{"not":"a failure record"}');
    expect(kept?.MessageAttributes?.["pipeline.reason.code"]?.StringValue).toBe("schema-violation");
  }, 180_000);

  it("the tool queue's DLQ is redriven to its source, and the job then runs", async () => {
    const job = statsJob("from-the-dlq", "session-dlq");
    await pipeline.sqs.send(
      new SendMessageCommand({ QueueUrl: pipeline.queues.toolJobsDlq.url, MessageBody: job }),
    );
    const moved = await cli(["redrive", "--queue", "tool-jobs", "--json", "--yes", "--watch", "3"]);
    expect(moved.code).toBe(0);
    expect(JSON.parse(moved.out)).toMatchObject({
      summary: { mode: "mover", moved: 1, failed: 0 },
      cameBack: 0,
    });
    await eventually(async () => expect((await call("from-the-dlq"))?.status).toBe("completed"));
  }, 180_000);
});
