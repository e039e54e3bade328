import { join } from "node:path";
import { type KinesisClient, PutRecordCommand } from "@aws-sdk/client-kinesis";
import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { sqsClient } from "@mcp-pipeline/aws";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import {
  createQueueWhenReady,
  createStreamWhenActive,
  emulatorClientOptions,
  type RunningEmulator,
  startKinesisEndpoint,
  startSqsS3Endpoint,
} from "@mcp-pipeline/emulators";
import { afterEach, expect } from "vitest";
import { type InvokeResult, LocalFunction } from "../src/index.js";

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

/** Kinesis (kinesalite) and SQS (fauxqs) on loopback, with helpers to create and fill resources. */
export class Emulators {
  private constructor(
    readonly kinesisEmulator: RunningEmulator,
    readonly sqsEmulator: RunningEmulator,
    readonly kinesis: KinesisClient,
    readonly sqs: SQSClient,
  ) {}

  static async start(): Promise<Emulators> {
    const [k, s] = await Promise.all([startKinesisEndpoint(), startSqsS3Endpoint()]);
    return new Emulators(k, s, kinesisClient(emulatorClientOptions(k)), sqsClient(emulatorClientOptions(s)));
  }

  async stop(): Promise<void> {
    await Promise.all([this.kinesisEmulator.stop(), this.sqsEmulator.stop()]);
  }

  #n = 0;
  name(prefix: string): string {
    this.#n += 1;
    return `${prefix}-${this.#n}`;
  }

  async stream(shards = 1): Promise<{ name: string; arn: string }> {
    const name = this.name("stream");
    await createStreamWhenActive(this.kinesis, { StreamName: name, ShardCount: shards });
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
    const fifo = options.fifo ? { FifoQueue: "true" } : {};
    let redrive: Record<string, string> = {};
    let dlqUrl: string | undefined;
    if (options.maxReceiveCount !== undefined) {
      const dlq = await createQueueWhenReady(this.sqs, {
        QueueName: `${this.name("dlq")}${suffix}`,
        Attributes: fifo,
      });
      dlqUrl = dlq.url;
      const dlqArn = await this.arnOf(dlqUrl);
      redrive = {
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: dlqArn,
          maxReceiveCount: options.maxReceiveCount,
        }),
      };
    }
    const { url: QueueUrl } = await createQueueWhenReady(this.sqs, {
      QueueName: `${this.name("queue")}${suffix}`,
      Attributes: { ...fifo, ...redrive, VisibilityTimeout: String(options.visibilitySeconds ?? 30) },
    });
    return { url: QueueUrl, arn: await this.arnOf(QueueUrl), ...(dlqUrl ? { dlqUrl } : {}) };
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

  async arnOf(url: string): Promise<string> {
    const { Attributes } = await this.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["QueueArn"] }),
    );
    return Attributes?.QueueArn ?? "";
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
