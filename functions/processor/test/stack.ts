import { ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import { type DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { dynamoDbDocumentClient } from "@mcp-pipeline/aws";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { encodeLifecycleEventRecord, type ToolCallLifecycleEvent } from "@mcp-pipeline/contracts";
import { EmulatorStack, emulatorClientOptions } from "@mcp-pipeline/emulators";
import { countRequests, kinesisRecord, type RequestCounter } from "@mcp-pipeline/emulators/testing";
import {
  kinesisSourceOf,
  readQuarantineRecord,
  writeQuarantineRecord,
} from "@mcp-pipeline/recovery/quarantine";
import { wiredEnvironment } from "@mcp-pipeline/settings";
import { type ToolCallState, ToolCallStore, toolCallsTableDefinition } from "@mcp-pipeline/tool-calls";
import { dedupeTableDefinition, IdempotencyStore } from "@mcp-pipeline/tool-calls/idempotency";
import type { KinesisStreamRecord } from "aws-lambda";
import type { PerEventDeps } from "../../../tools/bench/src/processor/per-event-path.js";
import type { ProcessorDeps } from "../src/core.js";

/**
 * DynamoDB (as AWS answers it: dynalite behind the fidelity proxy) and S3 from local/emulators'
 * EmulatorStack, with the processor's tables and bucket; one client per table, so requests are counted
 * per table.
 */
export class Stack {
  private constructor(
    private readonly stack: EmulatorStack,
    readonly toolCallsClient: DynamoDBDocumentClient,
    readonly dedupeClient: DynamoDBDocumentClient,
    readonly s3: S3Client,
    readonly toolCallWrites: RequestCounter,
    readonly dedupeRequests: RequestCounter,
  ) {}

  static async start(): Promise<Stack> {
    const stack = await EmulatorStack.start({ dynamodb: {}, sqsS3: true });
    const toolCallsClient = dynamoDbDocumentClient(emulatorClientOptions(stack.dynamodb));
    const dedupeClient = dynamoDbDocumentClient(emulatorClientOptions(stack.dynamodb));
    const s3 = s3Client(emulatorClientOptions(stack.sqsS3));
    return new Stack(
      stack,
      toolCallsClient,
      dedupeClient,
      s3,
      countRequests(toolCallsClient),
      countRequests(dedupeClient),
    );
  }

  get endpoints() {
    return { dynamo: this.stack.dynamodb.endpoint, s3: this.stack.sqsS3.endpoint };
  }

  /** What Lambda would set: the emulators' endpoints, and the declared variables with the stack's table and bucket. */
  functionEnvironment(): Record<string, string> {
    return {
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "test",
      AWS_SECRET_ACCESS_KEY: "test",
      AWS_ENDPOINT_URL_DYNAMODB: this.endpoints.dynamo,
      AWS_ENDPOINT_URL_S3: this.endpoints.s3,
      ...wiredEnvironment("processor", {
        tool_calls_table: this.tables.toolCalls,
        quarantine_bucket: this.tables.bucket,
      }),
    };
  }

  tableIndex = 0;
  tables = { toolCalls: "", dedupe: "", bucket: "" };

  /** Fresh tables and bucket for one test. */
  async reset(): Promise<void> {
    const n = ++this.tableIndex;
    this.tables = { toolCalls: `tool-calls-${n}`, dedupe: `dedupe-${n}`, bucket: `quarantine-${n}` };
    await this.stack.createTable(toolCallsTableDefinition(this.tables.toolCalls));
    await this.stack.createTable(dedupeTableDefinition(this.tables.dedupe));
    await this.stack.createBucket(this.tables.bucket);
    this.toolCallWrites.reset();
    this.dedupeRequests.reset();
  }

  deps(overrides: Partial<ProcessorDeps> = {}): ProcessorDeps {
    return {
      toolCalls: new ToolCallStore({ client: this.toolCallsClient, tableName: this.tables.toolCalls }),
      quarantine: this.quarantine(),
      concurrency: 8,
      deadlineMarginMs: 1_000,
      ...overrides,
    };
  }

  /** The previous per-event path (tools/bench/src/processor/per-event-path.ts) on the same tables, with the dedupe table. */
  perEventDeps(overrides: Partial<PerEventDeps> = {}): PerEventDeps {
    return {
      toolCalls: new ToolCallStore({ client: this.toolCallsClient, tableName: this.tables.toolCalls }),
      idempotency: new IdempotencyStore({
        client: this.dedupeClient,
        tableName: this.tables.dedupe,
        scope: "processor",
        retentionSeconds: 86_400,
      }),
      quarantine: this.quarantine(),
      concurrency: 8,
      deadlineMarginMs: 1_000,
      ...overrides,
    };
  }

  private quarantine(): ProcessorDeps["quarantine"] {
    const bucket = this.tables.bucket;
    return async (record, reason) => {
      await writeQuarantineRecord(this.s3, bucket, {
        formatVersion: 1,
        source: kinesisSourceOf(record),
        data: record.kinesis.data,
        reason,
        quarantinedAt: new Date().toISOString(),
        quarantinedBy: "processor",
      });
    };
  }

  async calls(): Promise<Map<string, ToolCallState>> {
    const items: ToolCallState[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.toolCallsClient.send(
        new ScanCommand({ TableName: this.tables.toolCalls, ConsistentRead: true, ExclusiveStartKey: start }),
      );
      items.push(...((page.Items ?? []) as ToolCallState[]));
      start = page.LastEvaluatedKey;
    } while (start);
    return new Map(items.map((i) => [i.callId, i]));
  }

  async quarantined() {
    const listed = await this.s3.send(new ListObjectsV2Command({ Bucket: this.tables.bucket }));
    return Promise.all(
      (listed.Contents ?? []).map((o) => readQuarantineRecord(this.s3, this.tables.bucket, o.Key ?? "")),
    );
  }

  async stop(): Promise<void> {
    this.toolCallsClient.destroy();
    this.dedupeClient.destroy();
    this.s3.destroy();
    await this.stack.stop();
  }
}

/** `n` started events over `sessions` sessions, one call per event, as Kinesis records in order. */
export function startedRecords(
  n: number,
  sessions: number,
): { events: ToolCallLifecycleEvent[]; records: KinesisStreamRecord[] } {
  const events: ToolCallLifecycleEvent[] = Array.from({ length: n }, (_, i) => ({
    specVersion: "1.0",
    eventId: `evt-${i}`,
    type: "tool_call.started",
    sessionId: `session-${i % sessions}`,
    callId: `call-${i}`,
    tool: "echo",
    occurredAt: new Date(Date.UTC(2026, 10, 30, 10, 0, 0, i)).toISOString(),
    attempt: 1,
  }));
  const records = events.map((e, i) => {
    const { data, partitionKey } = encodeLifecycleEventRecord(e);
    return kinesisRecord({ partitionKey, data, sequence: i });
  });
  return { events, records };
}
