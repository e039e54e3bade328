import { access, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KinesisClient, PutRecordCommand } from "@aws-sdk/client-kinesis";
import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { EmulatorStack, emulatorClientOptions } from "@mcp-pipeline/emulators";
import { afterEach, expect } from "vitest";
import { type InvokeResult, type KinesisEsmParameters, LocalFunction } from "../src/index.js";

/** What a test starts (event sources, functions): each is stopped after the test, whatever its outcome. */
export function stoppedAfterEach(): { stop(): Promise<void> }[] {
  const running: { stop(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.stop()));
  });
  return running;
}

export const SCRIPTED_HANDLER = join(import.meta.dirname, "fixtures", "scripted-handler.mjs");

export interface Payload {
  readonly id: string;
  readonly fail?: "throw" | "report";
  readonly sleepMs?: number;
  /** A file the invocation creates when it starts, and one it waits for (fixtures/scripted-handler.mjs). */
  readonly touch?: string;
  readonly awaitFile?: string;
}

export interface Invocation {
  readonly ids: string[];
  readonly identifiers: string[];
  readonly result: InvokeResult;
}

const payloadOf = (record: { kinesis?: { data: string }; body?: string }): Payload =>
  JSON.parse(
    record.kinesis ? Buffer.from(record.kinesis.data, "base64").toString("utf8") : (record.body ?? ""),
  );

/** A scripted function whose invocations are recorded in order. */
export class RecordingFunction {
  readonly invocations: Invocation[] = [];
  readonly fn: LocalFunction;

  constructor(options: { timeoutMs?: number; environment?: Record<string, string>; memoryMb?: number } = {}) {
    this.fn = new LocalFunction(
      {
        name: "scripted",
        codeFile: SCRIPTED_HANDLER,
        // Generous: a batch meant to succeed must not time out on a loaded machine.
        timeoutMs: options.timeoutMs ?? 60_000,
        memoryMb: options.memoryMb ?? 128,
        environment: options.environment ?? {},
      },
      { AWS_REGION: "us-east-1" },
      () => {},
    );
  }

  get arn(): string {
    return this.fn.arn;
  }

  get timeoutMs(): number {
    return this.fn.definition.timeoutMs;
  }

  async invoke(event: unknown): Promise<InvokeResult> {
    const records = (
      event as {
        Records: { kinesis?: { data: string; sequenceNumber: string }; body?: string; messageId?: string }[];
      }
    ).Records;
    const result = await this.fn.invoke(event);
    this.invocations.push({
      ids: records.map((r) => payloadOf(r).id),
      identifiers: records.map((r) => r.kinesis?.sequenceNumber ?? r.messageId ?? ""),
      result,
    });
    return result;
  }

  /** Every id invoked, in invocation order, with repeats. */
  get seen(): string[] {
    return this.invocations.flatMap((i) => i.ids);
  }

  stop(): Promise<void> {
    return this.fn.stop();
  }
}

/**
 * Kinesis (kinesalite) and SQS (fauxqs) on loopback, or moto's server under MCP_TEST_AWS=moto (the
 * stack of @mcp-pipeline/emulators), with helpers to create and fill resources.
 */
export class Emulators {
  private constructor(
    private readonly stack: EmulatorStack,
    readonly kinesis: KinesisClient,
    readonly sqs: SQSClient,
  ) {}

  static async start(): Promise<Emulators> {
    const stack = await EmulatorStack.start({ kinesis: true, sqsS3: true, followBackend: true });
    return new Emulators(
      stack,
      kinesisClient(emulatorClientOptions(stack.kinesis)),
      sqsClient(emulatorClientOptions(stack.sqsS3)),
    );
  }

  async stop(): Promise<void> {
    await this.stack.stop();
  }

  /** The endpoints, for a proxy put in front of one. */
  get endpoints(): { readonly kinesis: string; readonly sqs: string } {
    return { kinesis: this.stack.kinesis.endpoint, sqs: this.stack.sqsS3.endpoint };
  }

  #n = 0;
  name(prefix: string): string {
    this.#n += 1;
    return `${prefix}-${this.#n}`;
  }

  async stream(shards = 1): Promise<{ name: string; arn: string }> {
    const name = this.name("stream");
    await this.stack.createStream(name, shards);
    return { name, arn: `arn:aws:kinesis:us-east-1:000000000000:stream/${name}` };
  }

  /** Puts records one at a time (PutRecord), so their order in the shard is the order given. */
  async put(stream: string, items: readonly (Payload & { key?: string })[]): Promise<string[]> {
    const sequences: string[] = [];
    for (const { key, ...payload } of items) {
      const { SequenceNumber } = await this.kinesis.send(
        new PutRecordCommand({
          StreamName: stream,
          PartitionKey: key ?? "key",
          Data: new TextEncoder().encode(JSON.stringify(payload)),
        }),
      );
      sequences.push(SequenceNumber ?? "");
    }
    return sequences;
  }

  async queue(
    options: { fifo?: boolean; visibilitySeconds?: number; maxReceiveCount?: number } = {},
  ): Promise<{ url: string; arn: string; dlqUrl?: string }> {
    const suffix = options.fifo ? ".fifo" : "";
    // The DLQ is named first, as it is created first.
    const dlq =
      options.maxReceiveCount !== undefined
        ? { name: `${this.name("dlq")}${suffix}`, maxReceiveCount: options.maxReceiveCount }
        : undefined;
    const { url, arn, dlqUrl } = await this.stack.createQueue({
      name: `${this.name("queue")}${suffix}`,
      sharedAttributes: options.fifo ? { FifoQueue: "true" } : {},
      attributes: { VisibilityTimeout: String(options.visibilitySeconds ?? 30) },
      ...(dlq ? { dlq } : {}),
    });
    return { url, arn, ...(dlqUrl ? { dlqUrl } : {}) };
  }

  /** Messages still in the queue, visible, in flight or delayed: 0 once every message is deleted. */
  async depth(url: string): Promise<number> {
    const { Attributes = {} } = await this.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: [
          "ApproximateNumberOfMessages",
          "ApproximateNumberOfMessagesNotVisible",
          "ApproximateNumberOfMessagesDelayed",
        ],
      }),
    );
    return Object.values(Attributes).reduce((sum, n) => sum + Number(n), 0);
  }

  async send(queueUrl: string, items: readonly (Payload & { group?: string })[]): Promise<void> {
    for (const [i, { group, ...payload }] of items.entries()) {
      await this.sqs.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: JSON.stringify(payload),
          ...(group !== undefined
            ? { MessageGroupId: group, MessageDeduplicationId: `${payload.id}-${i}` }
            : {}),
        }),
      );
    }
  }

  /** Drains a queue (messages become invisible for a minute): bodies parsed as JSON. */
  async drain(queueUrl: string): Promise<unknown[]> {
    const out: unknown[] = [];
    for (;;) {
      const { Messages = [] } = await this.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 60 }),
      );
      if (Messages.length === 0) return out;
      out.push(...Messages.map((m) => JSON.parse(m.Body ?? "null")));
    }
  }
}

/** Polls `check` until it passes or `timeoutMs` runs out (then its last failure is thrown). */
export async function eventually(check: () => void | Promise<void>, timeoutMs = 90_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

export { expect };

/** Two files in a new directory: one an invocation creates when it starts, one it waits for (a barrier). */
export async function heldInvocation(): Promise<{
  readonly started: string;
  readonly release: string;
  readonly hasStarted: () => Promise<void>;
  readonly letGo: () => Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), "held-"));
  const started = join(dir, "started");
  const release = join(dir, "release");
  return {
    started,
    release,
    hasStarted: () => eventually(() => access(started)),
    letGo: () => writeFile(release, ""),
  };
}

/** A Kinesis mapping's parameters in the tests: one shard lane, no window, from the start of the stream. */
export const KINESIS_TEST_PARAMETERS: KinesisEsmParameters = {
  batchSize: 10,
  batchingWindowMs: 0,
  parallelizationFactor: 1,
  startingPosition: "TRIM_HORIZON",
  maximumRetryAttempts: 2,
  maximumRecordAgeMs: -1,
  bisectBatchOnFunctionError: false,
  reportBatchItemFailures: true,
};
