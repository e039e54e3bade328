import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  GetRecordsCommand,
  GetShardIteratorCommand,
  type KinesisClient,
  ListShardsCommand,
} from "@aws-sdk/client-kinesis";
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import { ReceiveMessageCommand, SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { dynamoDbDocumentClient, putAllRecords } from "@mcp-pipeline/aws";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { sendToDeadLetterQueue, sqsClient } from "@mcp-pipeline/aws/sqs-client";
import {
  CURRENT_SPEC_VERSION,
  decodeLifecycleEventBytes,
  encodeLifecycleEventRecord,
  encodeToolCallJob,
  type ToolCallJob,
  type ToolCallLifecycleEvent,
} from "@mcp-pipeline/contracts";
import {
  EmulatorStack,
  ESM_SYSTEM_ATTRIBUTES,
  emulatorClientOptions,
  toSqsEventRecord,
} from "@mcp-pipeline/emulators";
import { captureOutput, lambdaContext } from "@mcp-pipeline/emulators/testing";
import { type InvokeResult, SqsEventSource } from "@mcp-pipeline/local-runtime";
import { testTools, wiredEnvironment } from "@mcp-pipeline/settings";
import { type ToolCallState, ToolCallStore, toolCallsTableDefinition } from "@mcp-pipeline/tool-calls";
import { dedupeTableDefinition, IdempotencyStore } from "@mcp-pipeline/tool-calls/idempotency";
import { createTools, inputValidators } from "@mcp-pipeline/tools";
import { ToolRegistry } from "@mcp-pipeline/tools/registry";
import type { SQSEvent, SQSRecord } from "aws-lambda";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from "vitest";
import {
  placeResult,
  processToolCallJobs,
  type QueueMode,
  type WorkerDeps,
  type WorkerResult,
} from "../src/index.js";

/** One invocation of the worker by the event source mapping: the records it was given, and its result. */
export interface EsmInvocation {
  readonly records: readonly SQSRecord[];
  readonly result: WorkerResult;
}

/** Lambda's SQS event source mapping (local/runtime/src/esm) on a stack queue, invoking the worker's core. */
export interface RunningEsm {
  /** Every invocation so far, in the order they ended. */
  readonly invocations: readonly EsmInvocation[];
  stop(): Promise<void>;
}

/**
 * The queues' visibility timeout in a test where the event source mapping retries (`reset(n, this)`): a
 * reported message comes back after it. Long enough that an invocation on a loaded machine ends before
 * its messages come back.
 */
export const ESM_VISIBILITY_SECONDS = 5;

/** The `http.request` tool's timeout in the stack. */
export const HTTP_TOOL_TIMEOUT_MS = 10_000;

export const silentLogger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * A downstream for the `http.request` tool on loopback. Paths choose the behaviour:
 * `/ok/<tag>` answers 200, `/status/<code>/<tag>` answers that status, `/slow/<tag>` never answers (the
 * tool's timeout is the only way out of it, so no test depends on how fast a loaded machine runs).
 * Every request is recorded, in arrival order, with the `Idempotency-Key` it carried.
 */
class Downstream {
  readonly requests: string[] = [];
  readonly idempotencyKeys: (string | undefined)[] = [];
  constructor(readonly server: Server) {}

  static async start(): Promise<Downstream> {
    const downstream: Downstream = new Downstream(
      createServer((request, response) => {
        const path = request.url ?? "/";
        downstream.requests.push(path);
        const key = request.headers["idempotency-key"];
        downstream.idempotencyKeys.push(typeof key === "string" ? key : undefined);
        const status = /^\/status\/(\d{3})\//.exec(path)?.[1];
        if (path.startsWith("/slow/")) return;
        response.writeHead(status ? Number(status) : 200, { "content-type": "application/json" });
        response.end(JSON.stringify({ path }));
      }),
    );
    await new Promise<void>((resolve) => downstream.server.listen(0, "127.0.0.1", resolve));
    return downstream;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export interface Queue {
  readonly url: string;
  readonly arn: string;
  readonly dlqUrl: string;
}

/**
 * dynalite behind the DynamoDB fidelity proxy, fauxqs (SQS and S3) and kinesalite on loopback, with the
 * workers' resources.
 */
export class WorkerStack {
  private constructor(
    private readonly stack: EmulatorStack,
    readonly downstream: Downstream,
    readonly dynamo: DynamoDBDocumentClient,
    readonly s3: S3Client,
    readonly sqs: SQSClient,
    readonly kinesis: KinesisClient,
  ) {}

  static async start(): Promise<WorkerStack> {
    const [stack, downstream] = await Promise.all([
      // DynamoDB's answers where dynalite's differ (a failed conditional write returns the item); tables
      // stay CREATING for a while, as on AWS: the stack uses them only once ACTIVE.
      EmulatorStack.start({ dynamodb: { createTableMs: 200 }, sqsS3: true, kinesis: true }),
      Downstream.start(),
    ]);
    return new WorkerStack(
      stack,
      downstream,
      dynamoDbDocumentClient(emulatorClientOptions(stack.dynamodb)),
      s3Client(emulatorClientOptions(stack.sqsS3)),
      sqsClient(emulatorClientOptions(stack.sqsS3)),
      kinesisClient(emulatorClientOptions(stack.kinesis)),
    );
  }

  /** A worker's environment for this stack, as Terraform sets it in AWS (endpoints as AWS_ENDPOINT_URL_*). */
  functionEnvironment(dlqUrl: string): Record<string, string> {
    const [dynamo = "", sqsS3 = "", kinesis = ""] = this.endpoints;
    return {
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "test",
      AWS_SECRET_ACCESS_KEY: "test",
      AWS_ENDPOINT_URL_DYNAMODB: dynamo,
      AWS_ENDPOINT_URL_S3: sqsS3,
      AWS_ENDPOINT_URL_SQS: sqsS3,
      AWS_ENDPOINT_URL_KINESIS: kinesis,
      // The same wiring for either worker (function-environment.json declares tool_worker's and fifo_worker's alike).
      ...wiredEnvironment("tool_worker", {
        tool_calls_table: this.names.toolCalls,
        dedupe_table: this.names.dedupe,
        results_bucket: this.names.bucket,
        stream: this.names.stream,
        "queue.dlq_url": dlqUrl,
        // The stack's queues have no redrive policy: SQS moves nothing, so the worker is not told a count.
        "queue.max_receive_count": undefined,
        // The tests run load.latency, a test tool (docs/tool-workers.md).
        test_tools: testTools.value(true),
      }),
      HTTP_TOOL_BASE_URL: this.downstream.url,
    };
  }

  /** DynamoDB, SQS and S3, Kinesis endpoints. */
  get endpoints(): string[] {
    return this.stack.endpoints;
  }

  async stop(): Promise<void> {
    await Promise.all([this.stack.stop(), this.downstream.stop()]);
  }

  private n = 0;
  names = { toolCalls: "", dedupe: "", bucket: "", stream: "" };
  standard: Queue = { url: "", arn: "", dlqUrl: "" };
  fifo: Queue = { url: "", arn: "", dlqUrl: "" };

  /**
   * Fresh tables, bucket, stream and queues (each with a DLQ after `maxReceiveCount` receives). A test
   * that lets the event source mapping retry (`esm`) gives a short visibility timeout: a reported message
   * comes back once it ends (§2.3).
   */
  async reset(maxReceiveCount = 3, visibilityTimeoutSeconds = 30): Promise<void> {
    const n = ++this.n;
    this.names = {
      toolCalls: `tool-calls-${n}`,
      dedupe: `dedupe-${n}`,
      bucket: `results-${n}`,
      stream: `events-${n}`,
    };
    await this.stack.createTable(toolCallsTableDefinition(this.names.toolCalls));
    await this.stack.createTable(dedupeTableDefinition(this.names.dedupe));
    await this.stack.createBucket(this.names.bucket);
    await this.stack.createStream(this.names.stream);
    this.standard = await this.createQueue(`jobs-${n}`, false, maxReceiveCount, visibilityTimeoutSeconds);
    this.fifo = await this.createQueue(`jobs-${n}.fifo`, true, maxReceiveCount, visibilityTimeoutSeconds);
  }

  private async createQueue(
    name: string,
    fifo: boolean,
    maxReceiveCount: number,
    visibilityTimeoutSeconds: number,
  ): Promise<Queue> {
    const queue = await this.stack.createQueue({
      name,
      sharedAttributes: fifo ? { FifoQueue: "true", ContentBasedDeduplication: "false" } : {},
      attributes: { VisibilityTimeout: String(visibilityTimeoutSeconds) },
      dlq: { name: fifo ? name.replace(/\.fifo$/, "-dlq.fifo") : `${name}-dlq`, maxReceiveCount },
    });
    return { url: queue.url, arn: queue.arn, dlqUrl: queue.dlqUrl ?? "" };
  }

  deps(mode: QueueMode, overrides: Partial<WorkerDeps> = {}): WorkerDeps {
    const queue = mode === "fifo" ? this.fifo : this.standard;
    return {
      mode,
      registry: new ToolRegistry(
        // Long enough that an ordinary loopback request finishes on a machine under heavy load; only
        // `/slow/` (which never answers) reaches it.
        createTools({
          HTTP_TOOL_BASE_URL: this.downstream.url,
          HTTP_TOOL_TIMEOUT_MS: HTTP_TOOL_TIMEOUT_MS,
          TEST_TOOLS: "on",
        }),
        inputValidators,
      ),
      toolCalls: new ToolCallStore({ client: this.dynamo, tableName: this.names.toolCalls }),
      idempotency: new IdempotencyStore({
        client: this.dynamo,
        tableName: this.names.dedupe,
        scope: `${mode}-worker`,
        retentionSeconds: 86_400,
      }),
      placeResult: (callId, json, options) =>
        placeResult(this.s3, this.names.bucket, callId, json, 4_096, options),
      publish: async (events, options = {}) => {
        await putAllRecords(
          this.kinesis,
          { streamName: this.names.stream },
          events.map(encodeLifecycleEventRecord),
          options,
        );
      },
      deadLetter: (record, reason, options) =>
        sendToDeadLetterQueue(this.sqs, queue.dlqUrl, record, reason, options),
      logger: silentLogger,
      concurrency: 10,
      deadlineMarginMs: 1_000,
      ...overrides,
    };
  }

  /**
   * The worker's two DynamoDB stores reached through `endpoint` (a fault proxy in front of this stack's
   * DynamoDB), with the client to destroy afterwards.
   */
  storesVia(
    endpoint: string,
    mode: QueueMode,
  ): { stores: Pick<WorkerDeps, "toolCalls" | "idempotency">; client: DynamoDBDocumentClient } {
    const client = dynamoDbDocumentClient({ ...emulatorClientOptions({ endpoint, stop: async () => {} }) });
    return {
      client,
      stores: {
        toolCalls: new ToolCallStore({ client, tableName: this.names.toolCalls }),
        idempotency: new IdempotencyStore({
          client,
          tableName: this.names.dedupe,
          scope: `${mode}-worker`,
          retentionSeconds: 86_400,
        }),
      },
    };
  }

  /** The keys of the result objects stored for a call, one per run that reached S3. */
  async resultKeys(callId: string): Promise<string[]> {
    const { Contents = [] } = await this.s3.send(
      new ListObjectsV2Command({
        Bucket: this.names.bucket,
        Prefix: `results/${encodeURIComponent(callId)}/`,
      }),
    );
    return Contents.flatMap((o) => (o.Key ? [o.Key] : [])).sort();
  }

  async object(key: string): Promise<string> {
    const object = await this.s3.send(new GetObjectCommand({ Bucket: this.names.bucket, Key: key }));
    return (await object.Body?.transformToString()) ?? "";
  }

  /** Sends message bodies; for FIFO, each with its group (and a unique deduplication id). */
  async send(queue: Queue, messages: readonly { body: string; group?: string }[]): Promise<void> {
    for (const [i, message] of messages.entries()) {
      await this.sqs.send(
        new SendMessageCommand({
          QueueUrl: queue.url,
          MessageBody: message.body,
          ...(message.group !== undefined
            ? { MessageGroupId: message.group, MessageDeduplicationId: `${Date.now()}-${i}-${Math.random()}` }
            : {}),
        }),
      );
    }
  }

  /**
   * Starts Lambda's SQS event source mapping (local/runtime/src/esm: its polling, deletion of what succeeded,
   * partial batch responses, §2) on `queue`, invoking the worker's core in process with `deps(n)` for the
   * n-th invocation (0-based), so a test can change a dependency between attempts. Stop it once the test
   * is done with the queue: a long poll still open on the server when it stops can take a message sent
   * just after, which then stays hidden for the visibility timeout.
   */
  async esm(queue: Queue, deps: (invocation: number) => WorkerDeps): Promise<RunningEsm> {
    const invocations: EsmInvocation[] = [];
    let started = 0;
    const source = new SqsEventSource({
      sqs: this.sqs,
      queueUrl: queue.url,
      function: {
        arn: "arn:aws:lambda:us-east-1:000000000000:function:worker-under-test",
        invoke: async (event): Promise<InvokeResult> => {
          const records = (event as SQSEvent).Records;
          const requestId = `esm-${started}`;
          try {
            const result = await processToolCallJobs(records, lambdaContext(), deps(started++));
            invocations.push({ records, result });
            const payload = JSON.stringify(result.response);
            return { kind: "ok", payload, durationMs: 0, maxMemoryUsedMb: 0, requestId };
          } catch (error) {
            // A failed invocation: the mapping deletes nothing and the batch comes back (§2.3).
            const { name, message } = error as Error;
            return {
              kind: "function-error",
              errorType: name,
              errorMessage: message,
              timedOut: false,
              durationMs: 0,
              requestId,
            };
          }
        },
      },
      parameters: {
        batchSize: 10,
        batchingWindowMs: 0,
        maximumConcurrency: 2,
        reportBatchItemFailures: true,
      },
      waitTimeSeconds: 1,
    });
    await source.start();
    return { invocations, stop: () => source.stop() };
  }

  /** One ReceiveMessage as the ESM does it, converted to the records Lambda delivers (§2.4). */
  async receive(queue: Queue, max = 10): Promise<SQSRecord[]> {
    const { Messages = [] } = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queue.url,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: 0,
        MessageSystemAttributeNames: ESM_SYSTEM_ATTRIBUTES,
        MessageAttributeNames: ["All"],
      }),
    );
    return Messages.map((m) => toSqsEventRecord(m, queue.arn));
  }

  /** Everything in a DLQ, with message attributes. */
  async drain(queueUrl: string): Promise<{ body: string; attributes: Record<string, string> }[]> {
    const out: { body: string; attributes: Record<string, string> }[] = [];
    for (;;) {
      const { Messages = [] } = await this.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          MessageAttributeNames: ["All"],
          VisibilityTimeout: 60,
        }),
      );
      if (Messages.length === 0) return out;
      for (const m of Messages) {
        const attributes = Object.fromEntries(
          Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue ?? ""]),
        );
        out.push({ body: m.Body ?? "", attributes });
      }
    }
  }

  call(callId: string): Promise<ToolCallState | undefined> {
    return new ToolCallStore({ client: this.dynamo, tableName: this.names.toolCalls }).get(callId);
  }

  /** Every lifecycle event on the stream, in stream order. */
  async events(): Promise<ToolCallLifecycleEvent[]> {
    const { Shards = [] } = await this.kinesis.send(new ListShardsCommand({ StreamName: this.names.stream }));
    const out: ToolCallLifecycleEvent[] = [];
    for (const shard of Shards) {
      const { ShardIterator } = await this.kinesis.send(
        new GetShardIteratorCommand({
          StreamName: this.names.stream,
          ShardId: shard.ShardId,
          ShardIteratorType: "TRIM_HORIZON",
        }),
      );
      const page = await this.kinesis.send(new GetRecordsCommand({ ShardIterator, Limit: 10_000 }));
      for (const record of page.Records ?? []) {
        const decoded = decodeLifecycleEventBytes(record.Data ?? new Uint8Array());
        if (!decoded.ok) throw decoded.error;
        out.push(decoded.value);
      }
    }
    return out;
  }
}

let callSeq = 0;

/** A job body; `callId` unique unless given. */
export function job(
  tool: string,
  args: Record<string, unknown>,
  extra: Partial<ToolCallJob> = {},
): ToolCallJob {
  callSeq += 1;
  return {
    specVersion: CURRENT_SPEC_VERSION,
    callId: `call-${callSeq}`,
    sessionId: "session-1",
    tool,
    arguments: args,
    enqueuedAt: new Date().toISOString(),
    ...extra,
  };
}

export const body = (j: ToolCallJob) => ({ body: encodeToolCallJob(j) });

/**
 * A worker function's handler tests: one stack for the file, and `freshHandler(env)`, the handler as a new
 * sandbox loads it (its configuration and clients are built on its first invocation), through `load`.
 */
export function workerHandlerSuite<H>(load: () => Promise<{ readonly handler: H }>) {
  let stack: WorkerStack | undefined;
  beforeAll(async () => {
    stack = await WorkerStack.start();
  });
  // Fresh queues and tables for each test: a job reported for retry comes back after its retry backoff
  // (seconds, §2.6), and would otherwise reach the next test's receive.
  beforeEach(async () => {
    await stack?.reset();
  });
  afterAll(() => stack?.stop());
  afterEach(() => {
    vi.unstubAllEnvs();
  });
  return {
    get stack(): WorkerStack {
      if (!stack) throw new Error("the worker stack starts in beforeAll: use it inside a test");
      return stack;
    },
    async freshHandler(env: Record<string, string | undefined>): Promise<H> {
      vi.resetModules();
      for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
      return (await load()).handler;
    },
    /**
     * Puts `messages` on `queue`, receives them as the event source mapping would, and invokes `handler`
     * once with them: the records, the handler's answer and the JSON lines it wrote.
     */
    async invokeWith(handler: H, queue: Queue, messages: readonly { body: string; group?: string }[]) {
      await this.stack.send(queue, messages);
      const records = await this.stack.receive(queue);
      const { result, lines } = await captureOutput(() =>
        (handler as AnyEventHandler)({ Records: records }, lambdaContext()),
      );
      return { records, result, lines };
    },
    /** Registers, in the caller's describe, the tests that the handler refuses an event that is not an SQS batch. */
    itRefusesMalformedEvents(): void {
      it.each([
        ["no event", undefined],
        ["an event without Records", { records: [] }],
        ["Records that is not an array", { Records: "x" }],
      ])("refuses %s with InvalidEventError", async (_name, event) => {
        const handler = (await this.freshHandler({})) as AnyEventHandler;
        await expect(handler(event, lambdaContext())).rejects.toMatchObject({
          name: "InvalidEventError",
          message: "expected an SQS event with a Records array",
        });
      });
    },
    /** Expects `handler` to fail with a ConfigError naming every one of `settings`, on every invocation (not only the first). */
    async expectConfigErrorNaming(handler: H, settings: readonly string[]): Promise<void> {
      for (const attempt of [1, 2]) {
        const run = (handler as AnyEventHandler)({ Records: [] }, lambdaContext());
        await expect(run, `invocation ${attempt}`).rejects.toMatchObject({ name: "ConfigError" });
        for (const name of settings) await expect(run).rejects.toThrow(name);
      }
    },
  };
}

/** A handler as the tests call it: with any event, to see what it refuses. */
type AnyEventHandler = (event: unknown, context: ReturnType<typeof lambdaContext>) => Promise<unknown>;
