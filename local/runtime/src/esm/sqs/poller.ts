import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { ESM_SYSTEM_ATTRIBUTES, toSqsEventRecord } from "@mcp-pipeline/emulators";
import { sleep } from "@mcp-pipeline/retry";
import type { SQSRecord } from "aws-lambda";
import { readBatchResponse } from "../batch-response.js";
import { RequestAbandonedError, sendWithin } from "../bounded-request.js";
import type { Invokable } from "../invokable.js";
import { MAX_PAYLOAD_BYTES } from "../kinesis/event.js";

/**
 * The mapping's parameters as the event source runs them: durations in ms, named with their unit
 * (packages/settings' SqsEsmSettings are the environment's, in seconds).
 */
export interface SqsEsmParameters {
  readonly batchSize: number;
  /** Standard queues only (§2.1). */
  readonly batchingWindowMs: number;
  /** ScalingConfig.MaximumConcurrency; null: the ESM's own scaling, modelled as its starting 5 (§2.2). */
  readonly maximumConcurrency: number | null;
  readonly reportBatchItemFailures: boolean;
}

export interface SqsEsmOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly function: Invokable & { readonly timeoutMs?: number };
  readonly parameters: SqsEsmParameters;
  /** Long-poll wait per ReceiveMessage, in s (Lambda uses long polling, §2.1). */
  readonly waitTimeSeconds?: number;
  /**
   * How long one request (GetQueueAttributes, DeleteMessageBatch; ReceiveMessage beyond its long-poll
   * wait) may go unanswered: then it is aborted and the poller goes on as after a failed call (§9.2
   * item 10). Default 30 s.
   */
  readonly requestBoundMs?: number;
  readonly onEvent?: (event: SqsEsmEvent) => void;
}

/** The requests the mapping itself sends. */
export type SqsEsmOperation = "GetQueueAttributes" | "ReceiveMessage" | "DeleteMessageBatch";

export type SqsEsmEvent =
  | {
      readonly type: "invoked";
      readonly queueUrl: string;
      readonly messages: number;
      readonly deleted: number;
      readonly outcome: "success" | "partial" | "invalid" | "function-error";
    }
  /** A ReceiveMessage answered: when it was sent and answered, its long-poll wait, the messages it returned. */
  | {
      readonly type: "received";
      readonly queueUrl: string;
      readonly from: number;
      readonly at: number;
      readonly waitSeconds: number;
      readonly messages: number;
    }
  /** A request got no answer within its bound and was aborted (§9.2 item 10). */
  | {
      readonly type: "request-abandoned";
      readonly queueUrl: string;
      readonly operation: SqsEsmOperation;
      readonly boundMs: number;
    };

export interface SqsEsmStats {
  /** ReceiveMessage requests sent, counted when sent: a long poll in flight is counted (§2.1). */
  receiveRequests: number;
  polledMessages: number;
  invocations: number;
  functionErrors: number;
  invalidResponses: number;
  /** Messages reported in batchItemFailures (FailedInvokeEventCount). */
  reportedMessages: number;
  deletedMessages: number;
  /** Requests aborted for want of an answer within their bound (§9.2 item 10). */
  abandonedRequests: number;
}

/** The function's timeout exceeds the queue's visibility timeout: Lambda refuses the mapping (§2.1). */
export class VisibilityTimeoutError extends Error {
  constructor(functionTimeoutMs: number, visibilitySeconds: number) {
    super(
      `the function's timeout (${functionTimeoutMs / 1000} s) exceeds the queue's visibility timeout ` +
        `(${visibilitySeconds} s); Lambda refuses this event source mapping (docs/aws-semantics.md §2.1)`,
    );
    this.name = "VisibilityTimeoutError";
  }
}

/** How long a request may go unanswered beyond its long-poll wait (as the Kinesis mapping's bound). */
const REQUEST_BOUND_MS = 30_000;

/**
 * Lambda's SQS event source mapping, run locally (docs/aws-semantics.md §2, §3, §9.2): long polling,
 * batch size and window, up to MaximumConcurrency batches in flight, deletion of what succeeded,
 * partial batch responses by messageId (an invalid response deletes nothing). Visibility timeouts,
 * receive counts, the move to the DLQ (the redrive policy) and FIFO group locking are the queue's own behaviour.
 */
export class SqsEventSource {
  readonly stats: SqsEsmStats = {
    receiveRequests: 0,
    polledMessages: 0,
    invocations: 0,
    functionErrors: 0,
    invalidResponses: 0,
    reportedMessages: 0,
    deletedMessages: 0,
    abandonedRequests: 0,
  };
  readonly #options: SqsEsmOptions;
  readonly #abort = new AbortController();
  readonly #loops: Promise<void>[] = [];
  #running = false;
  /** Messages received and not yet through their invocation and deletion. */
  #inHand = 0;
  /**
   * Set when a receive returned any message since the last scaling step: messages keep coming, so Lambda
   * adds a poller (§2.2); an empty receive leaves it unset.
   */
  #busy = false;
  #scaler: NodeJS.Timeout | undefined;
  #queueArn = "";
  #fifo = false;

  constructor(options: SqsEsmOptions) {
    this.#options = options;
  }

  /** Validates the mapping as Lambda does at creation, then starts the pollers. */
  async start(): Promise<void> {
    const { Attributes = {} } = await this.#send("GetQueueAttributes", 0, (abortSignal) =>
      this.#options.sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: this.#options.queueUrl,
          AttributeNames: ["QueueArn", "VisibilityTimeout", "FifoQueue"],
        }),
        { abortSignal },
      ),
    );
    this.#queueArn = Attributes.QueueArn ?? "";
    this.#fifo = Attributes.FifoQueue === "true";
    const visibility = Number(Attributes.VisibilityTimeout ?? 30);
    const timeoutMs = this.#options.function.timeoutMs;
    if (timeoutMs !== undefined && timeoutMs > visibility * 1000) {
      throw new VisibilityTimeoutError(timeoutMs, visibility);
    }
    this.#running = true;
    // Lambda starts with 5 concurrent batches and adds up to 300 a minute while messages keep coming,
    // up to MaximumConcurrency (§2.2). Without it, the ceiling is AWS's (about 1,000), not modelled.
    const ceiling = this.#options.parameters.maximumConcurrency ?? 1_000;
    for (let i = 0; i < Math.min(5, ceiling); i++) this.#loops.push(this.#poll());
    this.#scaler = setInterval(() => {
      if (this.#running && this.#busy && this.#loops.length < ceiling) this.#loops.push(this.#poll());
      this.#busy = false;
    }, 200);
  }

  /**
   * Messages this mapping has received and not yet finished with (invoked, then deleted or left to come
   * back): 0 means no batch is being gathered, invoked or deleted right now.
   */
  get inHand(): number {
    return this.#inHand;
  }

  /** Batches in flight at once right now (pollers started so far). */
  get pollers(): number {
    return this.#loops.length;
  }

  async stop(): Promise<void> {
    this.#running = false;
    clearInterval(this.#scaler);
    this.#abort.abort();
    await Promise.all(this.#loops);
  }

  /**
   * Sends one request within `waitMs` (a long poll's wait) plus the bound (§9.2 item 10), or until
   * `stop` aborts. An abandoned request is counted and reported, then fails like any other call.
   */
  async #send<T>(
    operation: SqsEsmOperation,
    waitMs: number,
    send: (signal: AbortSignal) => Promise<T>,
    stop?: AbortSignal,
  ): Promise<T> {
    const boundMs = waitMs + (this.#options.requestBoundMs ?? REQUEST_BOUND_MS);
    try {
      return await sendWithin(operation, boundMs, send, stop);
    } catch (error) {
      if (error instanceof RequestAbandonedError) {
        this.stats.abandonedRequests += 1;
        this.#options.onEvent?.({
          type: "request-abandoned",
          queueUrl: this.#options.queueUrl,
          operation,
          boundMs,
        });
      }
      throw error;
    }
  }

  async #receive(max: number, waitSeconds: number): Promise<Message[]> {
    this.stats.receiveRequests += 1;
    const from = Date.now();
    try {
      // An abandoned receive may have been served: its messages come back after the visibility
      // timeout (§2.1), a delay, never a loss.
      const { Messages = [] } = await this.#send(
        "ReceiveMessage",
        waitSeconds * 1000,
        (abortSignal) =>
          this.#options.sqs.send(
            new ReceiveMessageCommand({
              QueueUrl: this.#options.queueUrl,
              MaxNumberOfMessages: Math.min(10, max),
              WaitTimeSeconds: waitSeconds,
              MessageSystemAttributeNames: ESM_SYSTEM_ATTRIBUTES,
              MessageAttributeNames: ["All"],
            }),
            { abortSignal },
          ),
        // stop() ends a long poll at once; a delete in flight is left to finish (a batch's deletes).
        this.#abort.signal,
      );
      this.#options.onEvent?.({
        type: "received",
        queueUrl: this.#options.queueUrl,
        from,
        at: Date.now(),
        waitSeconds,
        messages: Messages.length,
      });
      return Messages;
    } catch {
      if (this.#running) await sleep(200);
      return [];
    }
  }

  async #poll(): Promise<void> {
    const { parameters } = this.#options;
    const longPoll = this.#options.waitTimeSeconds ?? 20;
    while (this.#running) {
      const batch: SQSRecord[] = [];
      let bytes = 0;
      // The window applies to standard queues only (§2.1, §3).
      const window = this.#fifo ? 0 : parameters.batchingWindowMs;
      let windowEnds = Number.POSITIVE_INFINITY;
      while (this.#running && batch.length < parameters.batchSize) {
        const waiting =
          batch.length === 0
            ? longPoll
            : Math.max(0, Math.min(longPoll, Math.floor((windowEnds - Date.now()) / 1000)));
        const messages = await this.#receive(parameters.batchSize - batch.length, waiting);
        this.#inHand += messages.length;
        for (const message of messages) {
          const record = toSqsEventRecord(message, this.#queueArn);
          bytes += Buffer.byteLength(JSON.stringify(record)) + 1;
          batch.push(record);
        }
        this.stats.polledMessages += messages.length;
        if (messages.length > 0) this.#busy = true;
        if (batch.length > 0 && windowEnds === Number.POSITIVE_INFINITY) windowEnds = Date.now() + window;
        if (batch.length === 0) continue;
        if (window === 0 || Date.now() >= windowEnds || bytes >= MAX_PAYLOAD_BYTES * 0.9) break;
        if (messages.length === 0) await sleep(Math.min(100, Math.max(0, windowEnds - Date.now())));
      }
      if (batch.length === 0) continue;
      try {
        await this.#invoke(batch);
      } finally {
        this.#inHand -= batch.length;
      }
    }
  }

  async #invoke(batch: SQSRecord[]): Promise<void> {
    const { parameters } = this.#options;
    this.stats.invocations += 1;
    const result = await this.#options.function.invoke({ Records: batch });
    let keep = new Set<string>();
    let outcome: Extract<SqsEsmEvent, { type: "invoked" }>["outcome"] = "success";
    if (result.kind === "function-error") {
      // The whole batch becomes visible again after the visibility timeout (§2.3).
      this.stats.functionErrors += 1;
      keep = new Set(batch.map((r) => r.messageId));
      outcome = "function-error";
    } else if (parameters.reportBatchItemFailures) {
      const reading = readBatchResponse(result.payload, new Set(batch.map((r) => r.messageId)));
      if (reading.kind === "invalid") {
        this.stats.invalidResponses += 1;
        keep = new Set(batch.map((r) => r.messageId));
        outcome = "invalid";
      } else if (reading.kind === "partial") {
        keep = new Set(reading.failed);
        this.stats.reportedMessages += keep.size;
        outcome = "partial";
      }
    }
    const done = batch.filter((r) => !keep.has(r.messageId));
    for (let i = 0; i < done.length; i += 10) {
      const chunk = done.slice(i, i + 10);
      try {
        await this.#send("DeleteMessageBatch", 0, (abortSignal) =>
          this.#options.sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: this.#options.queueUrl,
              Entries: chunk.map((r, n) => ({ Id: String(n), ReceiptHandle: r.receiptHandle })),
            }),
            { abortSignal },
          ),
        );
        this.stats.deletedMessages += chunk.length;
      } catch {
        // Undeleted messages come back after the visibility timeout: a duplicate, never a loss.
      }
    }
    this.#options.onEvent?.({
      type: "invoked",
      queueUrl: this.#options.queueUrl,
      messages: batch.length,
      deleted: done.length,
      outcome,
    });
  }
}
