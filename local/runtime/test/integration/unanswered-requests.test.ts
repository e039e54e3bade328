import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import {
  AwsJsonContentType,
  DoorAction,
  emulatorClientOptions,
  type RequestDoor,
  startRequestDoor,
} from "@mcp-pipeline/emulators";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type KinesisEsmEvent,
  type KinesisEsmParameters,
  KinesisEventSource,
  RequestAbandonedError,
  type SqsEsmEvent,
  SqsEventSource,
  sendWithin,
} from "../../src/index.js";
import { Emulators, eventually, RecordingFunction, stoppedAfterEach } from "../harness.js";

/**
 * An endpoint that accepts a request and never answers it (the request door's HoldUnsent: the request
 * stays open until its client aborts). Each mapping request must be abandoned at its bound and retried
 * (docs/aws-semantics.md §9.1 item 13, §9.2 item 10), or the poller, and every record behind it, waits
 * for as long as the server keeps the connection.
 */
let emulators: Emulators;
const running = stoppedAfterEach();
const doors: RequestDoor[] = [];
beforeAll(async () => {
  emulators = await Emulators.start();
});
afterAll(async () => {
  for (const door of doors) await door.stop();
  await emulators?.stop();
});

/** Short, so a test does not wait long for the abandonment; it is a parameter, not an assertion. */
const BOUND_MS = 300;

/** A door that holds the first `count` requests of `operation` (each abandoned at the bound) and passes the rest. */
async function holdFirst(
  upstream: string,
  operation: string,
  contentType: AwsJsonContentType,
  count = 1,
): Promise<RequestDoor> {
  let held = 0;
  const door = await startRequestDoor(
    upstream,
    (target) => {
      if (held >= count || !target.endsWith(`.${operation}`)) return DoorAction.Pass;
      held += 1;
      return DoorAction.HoldUnsent;
    },
    contentType,
  );
  doors.push(door);
  return door;
}

const kinesisParameters: KinesisEsmParameters = {
  batchSize: 10,
  batchingWindowMs: 0,
  parallelizationFactor: 1,
  startingPosition: "TRIM_HORIZON",
  maximumRetryAttempts: -1,
  maximumRecordAgeMs: -1,
  bisectBatchOnFunctionError: false,
  reportBatchItemFailures: true,
};

/** A door that holds the first `count` SendMessage requests to the destination. */
const holdSendMessages = (count: number) =>
  holdFirst(emulators.endpoints.sqs, "SendMessage", AwsJsonContentType.V1_0, count);

async function poisonMapping(
  door: RequestDoor,
  destinationRetrySpanMs?: number,
  /** The mapping's clock an hour ahead, its records older than MaximumRecordAgeInSeconds (60 s). */
  aged = false,
) {
  const stream = await emulators.stream();
  await emulators.put(stream.name, [{ id: "poison", fail: "throw" }]);
  const destination = await emulators.queue();
  const events: KinesisEsmEvent[] = [];
  const fn = new RecordingFunction();
  const esm = new KinesisEventSource({
    kinesis: emulators.kinesis,
    streamName: stream.name,
    stream: { streamArn: stream.arn, region: "us-east-1", roleArn: "arn:aws:iam::000000000000:role/r" },
    function: fn,
    parameters: {
      ...kinesisParameters,
      maximumRetryAttempts: 0,
      ...(aged ? { maximumRecordAgeMs: 60_000 } : {}),
    },
    ...(aged ? { now: () => Date.now() + 3_600_000 } : {}),
    onFailure: {
      sqs: sqsClient({ ...emulatorClientOptions(door), maxAttempts: 1 }),
      queueUrl: destination.url,
    },
    pollIntervalMs: 20,
    retryDelayMs: () => 10,
    requestBoundMs: BOUND_MS,
    ...(destinationRetrySpanMs === undefined ? {} : { destinationRetrySpanMs }),
    onEvent: (e) => events.push(e),
  });
  running.push(esm, fn);
  return { esm, events, destination };
}

describe("sendWithin", () => {
  it("abandons a request that ignores its signal: RequestAbandonedError names the operation and bound", async () => {
    // Act
    const outcome = sendWithin("GetRecords", 5, () => new Promise<never>(() => {}));

    // Assert
    const error = await outcome.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestAbandonedError);
    expect(error).toMatchObject({ name: "RequestAbandonedError", operation: "GetRecords", boundMs: 5 });
  });

  it("aborts the request's signal at the bound, and a stop signal ends it with stop's reason", async () => {
    // Prepare
    const stop = new AbortController();
    const signals: AbortSignal[] = [];
    const hang = (signal: AbortSignal) => {
      signals.push(signal);
      return new Promise<never>(() => {});
    };

    // Act
    const abandoned = await sendWithin("ListShards", 5, hang).catch((e: unknown) => e);
    const stopped = sendWithin("ReceiveMessage", 60_000, hang, stop.signal).catch((e: unknown) => e);
    stop.abort(new Error("stopped"));

    // Assert
    expect(abandoned).toBeInstanceOf(RequestAbandonedError);
    expect(signals[0]?.aborted).toBe(true);
    expect(await stopped).toMatchObject({ message: "stopped" });
    expect(signals[1]?.aborted).toBe(true);
  });

  it("passes an answer and an error through untouched", async () => {
    // Act
    const answer = await sendWithin("GetRecords", 60_000, async () => "answer");
    const error = await sendWithin("GetRecords", 60_000, async () => {
      throw new Error("throttled");
    }).catch((e: unknown) => e);

    // Assert
    expect(answer).toBe("answer");
    expect(error).toMatchObject({ message: "throttled" });
  });
});

describe("§9.1 item 13: the Kinesis mapping abandons an unanswered request and retries it", () => {
  for (const operation of ["ListShards", "GetShardIterator", "GetRecords"] as const) {
    it(`${operation} never answered: abandoned, retried, every record delivered`, async () => {
      // Prepare
      const stream = await emulators.stream();
      await emulators.put(stream.name, [{ id: "a" }, { id: "b" }, { id: "c" }]);
      const door = await holdFirst(emulators.endpoints.kinesis, operation, AwsJsonContentType.V1_1);
      const fn = new RecordingFunction();
      const events: KinesisEsmEvent[] = [];
      const esm = new KinesisEventSource({
        kinesis: kinesisClient({ ...emulatorClientOptions(door), maxAttempts: 1 }),
        streamName: stream.name,
        stream: { streamArn: stream.arn, region: "us-east-1", roleArn: "arn:aws:iam::000000000000:role/r" },
        function: fn,
        parameters: kinesisParameters,
        pollIntervalMs: 20,
        shardRefreshMs: 20,
        readRetryDelayMs: () => 10,
        requestBoundMs: BOUND_MS,
        onEvent: (e) => events.push(e),
      });
      running.push(esm, fn);

      // Act
      esm.start();

      // Assert
      await eventually(() => expect(fn.seen).toEqual(["a", "b", "c"]));
      // At least the held one: on a loaded machine an answer slower than the short test bound is abandoned too.
      expect(esm.stats.abandonedRequests).toBeGreaterThanOrEqual(1);
      expect(events.filter((e) => e.type === "request-abandoned")).toContainEqual({
        type: "request-abandoned",
        operation,
        shardId: operation === "ListShards" ? undefined : "shardId-000000000000",
        boundMs: BOUND_MS,
      });
      // The SDK aborted the request: the door saw its client close the connection.
      await eventually(() => expect(door.stats.abandoned).toBe(1));
    });
  }

  it("a SendMessage to the on-failure destination never answered: abandoned, retried, the record arrives", async () => {
    // Prepare
    const door = await holdSendMessages(1);
    const { esm, destination } = await poisonMapping(door);

    // Act
    esm.start();

    // Assert
    await eventually(() => expect(esm.stats.onFailureDelivered).toBe(1));
    expect(esm.stats.destinationDeliveryFailures).toBe(0);
    // At least the held one: on a loaded machine an answer slower than the short test bound is abandoned too.
    expect(esm.stats.abandonedRequests).toBeGreaterThanOrEqual(1);
    const records = (await emulators.drain(destination.url)) as { requestContext?: { condition?: string } }[];
    expect(records.map((r) => r.requestContext?.condition)).toEqual(["RetryAttemptsExhausted"]);
  });
});

describe("§1.6, §6: the on-failure destination is tried for a span, then the records are dropped", () => {
  it("a destination down for more than five tries: still delivered within the span, nothing dropped", async () => {
    // Prepare: six unanswered sends, one more than the mapping used to try (the chaos run's SQS restart
    // outlasted five tries on a loaded machine).
    const door = await holdSendMessages(6);
    const { esm, events, destination } = await poisonMapping(door);

    // Act
    esm.start();

    // Assert
    await eventually(() => expect(esm.stats.onFailureDelivered).toBe(1));
    expect(esm.stats.destinationDeliveryFailures).toBe(0);
    expect(door.stats.held).toBe(6);
    expect(esm.stats.abandonedRequests).toBeGreaterThanOrEqual(6);
    expect(events.filter((e) => e.type === "destination-failed")).toEqual([]);
    const records = (await emulators.drain(destination.url)) as { requestContext?: { condition?: string } }[];
    expect(records.map((r) => r.requestContext?.condition)).toEqual(["RetryAttemptsExhausted"]);
  });

  it("a destination down past the span: the batch is dropped, counted and reported with its failure record", async () => {
    // Prepare: the door never lets a SendMessage through; the span covers two tries (300 ms bound each,
    // 200 ms between).
    const door = await holdSendMessages(Number.POSITIVE_INFINITY);
    const { esm, events, destination } = await poisonMapping(door, 600);

    // Act
    esm.start();

    // Assert
    await eventually(() => expect(esm.stats.destinationDeliveryFailures).toBe(1));
    expect(esm.stats.onFailureDelivered).toBe(0);
    expect(esm.stats.abandonedRequests).toBeGreaterThanOrEqual(1);
    const failed = events.filter((e) => e.type === "destination-failed");
    expect(failed).toEqual([
      {
        type: "destination-failed",
        errorName: "RequestAbandonedError",
        record: expect.objectContaining({
          requestContext: expect.objectContaining({ condition: "RetryAttemptsExhausted" }),
          KinesisBatchInfo: expect.objectContaining({ shardId: "shardId-000000000000", batchSize: 1 }),
        }),
      },
    ]);
    expect(await emulators.drain(destination.url)).toEqual([]);
  });

  /** The bounds of the mapping's abandoned SendMessage tries, in order. */
  const sendBounds = (events: readonly KinesisEsmEvent[]) =>
    events.flatMap((e) =>
      e.type === "request-abandoned" && e.operation === "SendMessage" ? [e.boundMs] : [],
    );

  it("no try outlasts the span: a try's bound is at most what is left of it", async () => {
    // Prepare: a span shorter than one request bound (the defaults: 60 s and 30 s, so a try begun late
    // in the span held the batch for up to 90 s).
    const span = BOUND_MS / 2;
    const door = await holdSendMessages(Number.POSITIVE_INFINITY);
    const { esm, events } = await poisonMapping(door, span);

    // Act
    esm.start();

    // Assert: dropped, and no try was given longer than the span.
    await eventually(() => expect(esm.stats.destinationDeliveryFailures).toBe(1));
    expect(sendBounds(events).length).toBeGreaterThanOrEqual(1);
    expect(Math.max(...sendBounds(events))).toBeLessThanOrEqual(span);
  });

  it("stop ends the tries: stop does not wait out the span, the batch is neither dropped nor checkpointed past", async () => {
    // Prepare: a span far longer than a try (300 ms bound), a destination that never answers.
    const door = await holdSendMessages(Number.POSITIVE_INFINITY);
    const { esm, events } = await poisonMapping(door, 20_000);
    esm.start();
    await eventually(() => expect(sendBounds(events).length).toBeGreaterThanOrEqual(1));
    // The checkpoint waits for the failure record's delivery: it is not past the poison record yet.
    expect(esm.checkpoints.get("shardId-000000000000")).toBeUndefined();
    // Each try is a request the door holds, counted as it arrives.
    const triesBeforeStop = door.stats.held;

    // Act
    let stopped = false;
    const stopping = esm.stop().then(() => {
      stopped = true;
    });

    // Assert: stop returns (after the try in flight, if any, is abandoned at its bound) before the
    // mapping tries the destination again (no timer decides: one or the other happens first).
    await eventually(() => expect(stopped || door.stats.held > triesBeforeStop).toBe(true));
    expect({ stopped, triesAfterStop: door.stats.held - triesBeforeStop }).toEqual({
      stopped: true,
      triesAfterStop: 0,
    });
    await stopping;
    // Not delivered, not dropped: the records are not done, so the checkpoint stays before them and a
    // mapping that starts from it reads them again (at least once, §1.3).
    expect(esm.stats.onFailureDelivered).toBe(0);
    expect(esm.stats.destinationDeliveryFailures).toBe(0);
    expect(events.filter((e) => e.type === "destination-failed")).toEqual([]);
    expect(esm.checkpoints.get("shardId-000000000000")).toBeUndefined();
  });
  it("stop ends the tries for records too old to invoke: none invoked, none dropped, none checkpointed past", async () => {
    // Prepare: the record is past MaximumRecordAgeInSeconds when read (§1.3), the destination never answers.
    const door = await holdSendMessages(Number.POSITIVE_INFINITY);
    const { esm, events } = await poisonMapping(door, 20_000, true);
    esm.start();
    await eventually(() => expect(sendBounds(events).length).toBeGreaterThanOrEqual(1));
    expect(
      events.filter((e) => e.type === "discarded").map((e) => e.record.requestContext.condition),
    ).toEqual(["RecordAgeExceeded"]);

    // Act
    await esm.stop();

    // Assert: given up on for its age, never invoked, and not done: a mapping that starts from the
    // checkpoint reads it again (at least once, §1.3).
    expect(esm.stats.invocations).toBe(0);
    expect(esm.stats.onFailureDelivered).toBe(0);
    expect(esm.stats.destinationDeliveryFailures).toBe(0);
    expect(esm.checkpoints.get("shardId-000000000000")).toBeUndefined();
    expect(esm.finishedShards.size).toBe(0);
  });
});

describe("§9.2 item 10: the SQS mapping abandons an unanswered request", () => {
  async function sqsSetup(operation: string) {
    const queue = await emulators.queue({ visibilitySeconds: 2 });
    const door = await holdFirst(emulators.endpoints.sqs, operation, AwsJsonContentType.V1_0);
    const fn = new RecordingFunction({ timeoutMs: 2_000 });
    const events: SqsEsmEvent[] = [];
    const esm = new SqsEventSource({
      sqs: sqsClient({ ...emulatorClientOptions(door), maxAttempts: 1 }),
      queueUrl: queue.url,
      function: fn,
      // One poller: a held request would hold every message.
      parameters: { batchSize: 1, batchingWindowMs: 0, maximumConcurrency: 1, reportBatchItemFailures: true },
      waitTimeSeconds: 1,
      requestBoundMs: BOUND_MS,
      onEvent: (e) => events.push(e),
    });
    running.push(esm, fn);
    return { queue, fn, esm, events };
  }

  it("ReceiveMessage never answered: abandoned, the poller receives again and the message is invoked", async () => {
    // Prepare
    const { queue, fn, esm, events } = await sqsSetup("ReceiveMessage");

    // Act
    await esm.start();
    await emulators.send(queue.url, [{ id: "m1" }]);

    // Assert
    await eventually(() => expect(fn.seen).toContain("m1"));
    // At least the held one: on a loaded machine an answer slower than the short test bound is abandoned too.
    expect(esm.stats.abandonedRequests).toBeGreaterThanOrEqual(1);
    expect(events.filter((e) => e.type === "request-abandoned")).toContainEqual({
      type: "request-abandoned",
      queueUrl: queue.url,
      operation: "ReceiveMessage",
      boundMs: 1_000 + BOUND_MS,
    });
  });

  it("DeleteMessageBatch never answered: abandoned, the poller goes on to the next message", async () => {
    // Prepare
    const { queue, fn, esm } = await sqsSetup("DeleteMessageBatch");

    // Act
    await esm.start();
    await emulators.send(queue.url, [{ id: "first" }]);
    await eventually(() => expect(fn.seen).toContain("first"));
    await emulators.send(queue.url, [{ id: "second" }]);

    // Assert: the undeleted first message may come back (a duplicate, never a loss, §2.3).
    await eventually(() => expect(fn.seen).toContain("second"));
    // At least the held one: on a loaded machine an answer slower than the short test bound is abandoned too.
    expect(esm.stats.abandonedRequests).toBeGreaterThanOrEqual(1);
    await eventually(async () => expect(await emulators.depth(queue.url)).toBe(0));
  });

  it("GetQueueAttributes never answered: start() fails with RequestAbandonedError", async () => {
    // Prepare
    const { esm } = await sqsSetup("GetQueueAttributes");

    // Act
    const error = await esm.start().catch((e: unknown) => e);

    // Assert
    expect(error).toBeInstanceOf(RequestAbandonedError);
    expect(error).toMatchObject({ operation: "GetQueueAttributes" });
  });
});
