// The settle path of the retry backoff (src/redelivery.ts, src/sqs-visibility.ts) against a faked SQS
// client: which ChangeMessageVisibilityBatch requests go out for a batch's reported jobs, and that a
// change that fails loses nothing (the job is reported either way, docs/aws-semantics.md §2.3, §2.6).
import type { ChangeMessageVisibilityBatchCommand } from "@aws-sdk/client-sqs";
import {
  type BatchOutcome,
  processSqsBatch,
  processSqsFifoBatch,
  requestDeadlines,
} from "@mcp-pipeline/batch";
import { TransientError } from "@mcp-pipeline/contracts";
import { sqsRecord } from "@mcp-pipeline/emulators/testing";
import type { SQSRecord } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { backOffRedeliveries, lazyChangeVisibility, type Redelivery } from "../../src/redelivery.js";
import { changeMessageVisibility } from "../../src/sqs-visibility.js";

type Input = ChangeMessageVisibilityBatchCommand["input"];

/** An SQS client that records each ChangeMessageVisibilityBatch and answers as `answer` says. */
function fakeSqs(
  answer: (input: Input) => { Failed?: { Id: string; Code: string; Message: string }[] } = () => ({}),
) {
  const requests: Input[] = [];
  return {
    requests,
    client: {
      send: async (command: ChangeMessageVisibilityBatchCommand) => {
        requests.push(command.input);
        return { Successful: [], Failed: [], ...answer(command.input) };
      },
    } as unknown as Parameters<typeof changeMessageVisibility>[0],
  };
}

function warnings() {
  const seen: { message: string; data: unknown }[] = [];
  const logger = {
    debug() {},
    info() {},
    error() {},
    warn(message: string, data?: unknown) {
      seen.push({ message, data });
    },
  };
  return { seen, logger };
}

const QUEUE_ARN = "arn:aws:sqs:eu-west-1:123456789012:mcp-dev-tool-jobs";
const QUEUE_URL = "https://sqs.eu-west-1.amazonaws.com/123456789012/mcp-dev-tool-jobs";
const half = () => 0.5;

function redelivery(sqs: ReturnType<typeof fakeSqs>["client"]): Redelivery {
  return {
    backoff: { baseMs: 5_000, capMs: 120_000, maxReceiveCount: 5 },
    random: half,
    changeVisibility: (url, changes, signal) => changeMessageVisibility(sqs, url, changes, signal),
  };
}

/** Runs a batch through the engine, failing (transiently) the messages named. */
async function outcomeOf(
  records: readonly SQSRecord[],
  fifo: boolean,
  failing: ReadonlySet<string>,
): Promise<BatchOutcome<SQSRecord>> {
  const run = fifo ? processSqsFifoBatch : processSqsBatch;
  return run(records, {
    concurrency: 4,
    handle: async (record) => {
      if (failing.has(record.messageId)) throw new TransientError("downstream-5xx", "blip");
    },
    setAside: async () => {},
  });
}

const standard = (id: string, receives = 1) =>
  sqsRecord({ messageId: id, body: "{}", receiveCount: receives, queueArn: QUEUE_ARN });
const fifo = (id: string, group: string, receives = 1) =>
  sqsRecord({ messageId: id, body: "{}", receiveCount: receives, groupId: group, queueArn: QUEUE_ARN });

type FakeClient = ReturnType<typeof fakeSqs>["client"];

/**
 * Runs a batch through the engine (the messages in `failing` fail transiently), then the settle path with
 * `client` as SQS: what it changed, the batch's outcome, and the warnings it logged.
 */
async function settle(
  records: readonly SQSRecord[],
  mode: "standard" | "fifo",
  failing: readonly string[],
  client: FakeClient,
  signal: AbortSignal = new AbortController().signal,
) {
  const outcome = await outcomeOf(records, mode === "fifo", new Set(failing));
  const { logger, seen } = warnings();
  const changed = await backOffRedeliveries(records, outcome, mode, redelivery(client), signal, logger);
  return { changed, outcome, warned: seen };
}

describe("backOffRedeliveries: the reported jobs' visibility, set on their source queue", () => {
  it("standard queue: one request with each reported job's backoff; succeeded jobs and the last receive untouched", async () => {
    const records = [standard("ok-1"), standard("m-1", 1), standard("m-2", 3), standard("m-last", 5)];
    const sqs = fakeSqs();

    const { changed, warned } = await settle(records, "standard", ["m-1", "m-2", "m-last"], sqs.client);

    expect(changed).toBe(2);
    expect(sqs.requests).toEqual([
      {
        QueueUrl: QUEUE_URL,
        Entries: [
          // 0.5 x min(120 s, 5 s x 2^(receives - 1)), rounded to whole seconds
          { Id: "0", ReceiptHandle: "handle-m-1", VisibilityTimeout: 3 },
          { Id: "1", ReceiptHandle: "handle-m-2", VisibilityTimeout: 10 },
        ],
      },
    ]);
    expect(warned).toEqual([]);
  });

  it("more than ten reported jobs: requests of at most ten entries (SQS's limit, §2.6)", async () => {
    const records = Array.from({ length: 23 }, (_, i) => standard(`m-${i}`));
    const sqs = fakeSqs();

    const { changed } = await settle(
      records,
      "standard",
      records.map((r) => r.messageId),
      sqs.client,
    );

    expect(sqs.requests.map((r) => r.Entries?.length)).toEqual([10, 10, 3]);
    expect(sqs.requests.flatMap((r) => r.Entries?.map((e) => e.ReceiptHandle))).toEqual(
      records.map((r) => r.receiptHandle),
    );
    expect(changed).toBe(23);
  });

  it("FIFO: the failed job and every later one of its group get the group's timeout; other groups go on (§3)", async () => {
    // Group a fails at a2 (a3 is not started); group b succeeds; group c fails at its first, received twice.
    const records = [
      fifo("a1", "a"),
      fifo("b1", "b"),
      fifo("a2", "a", 2),
      fifo("c1", "c", 2),
      fifo("a3", "a"),
      fifo("c2", "c"),
    ];
    const sqs = fakeSqs();

    const { outcome } = await settle(records, "fifo", ["a2", "c1"], sqs.client);

    expect(outcome.outcomes.map((o) => o.status)).toEqual([
      "succeeded",
      "succeeded",
      "failed",
      "failed",
      "not-started",
      "not-started",
    ]);
    expect(sqs.requests).toHaveLength(1);
    expect(sqs.requests[0]?.Entries).toEqual([
      // a2 was received twice: 0.5 x 10 s; a3 returns with it, never before it.
      { Id: "0", ReceiptHandle: "handle-a2", VisibilityTimeout: 5 },
      { Id: "1", ReceiptHandle: "handle-a3", VisibilityTimeout: 5 },
      { Id: "2", ReceiptHandle: "handle-c1", VisibilityTimeout: 5 },
      { Id: "3", ReceiptHandle: "handle-c2", VisibilityTimeout: 5 },
    ]);
  });

  it("a request that fails: no job is lost, each gets a warning, none counts as backed off", async () => {
    const denied = {
      send: async () => {
        throw Object.assign(new Error("Access to the resource is denied"), { name: "AccessDenied" });
      },
    } as unknown as FakeClient;

    const { changed, outcome, warned } = await settle(
      [standard("m-1"), standard("m-2")],
      "standard",
      ["m-1", "m-2"],
      denied,
    );

    expect(changed).toBe(0);
    const warning = (messageId: string) => ({
      message: expect.stringMatching(/returns after the visibility timeout/),
      data: { messageId, error: expect.stringMatching(/denied/) },
    });
    expect(warned).toEqual([warning("m-1"), warning("m-2")]);
    // What the function answers is the batch outcome's: both are still reported for retry.
    expect(outcome.outcomes.map((o) => o.status)).toEqual(["failed", "failed"]);
  });

  it("an entry SQS refuses (a stale receipt handle): a warning for that job only", async () => {
    const sqs = fakeSqs(() => ({
      Failed: [{ Id: "1", Code: "ReceiptHandleIsInvalid", Message: "The input receipt handle is invalid." }],
    }));

    const { changed, warned } = await settle(
      [standard("m-1"), standard("m-2")],
      "standard",
      ["m-1", "m-2"],
      sqs.client,
    );

    expect(changed).toBe(1);
    expect(warned.map((w) => w.data)).toEqual([
      { messageId: "m-2", error: expect.stringMatching(/^ReceiptHandleIsInvalid: /) },
    ]);
  });

  it("no time left in the invocation: no request, so the answer cannot turn into a timeout", async () => {
    const sqs = fakeSqs();
    // The settle stage of requestDeadlines (@mcp-pipeline/batch) already over: its signal is aborted.
    const { settle: over } = requestDeadlines({ getRemainingTimeInMillis: () => 100 }, 400);

    const { changed, warned } = await settle([standard("m-1")], "standard", ["m-1"], sqs.client, over);

    expect(changed).toBe(0);
    expect(sqs.requests).toEqual([]);
    expect(warned.map((w) => w.data)).toEqual([
      { messageId: "m-1", error: "no time left in the invocation" },
    ]);
  });

  it("an event source ARN that is not a queue's: a warning, no request", async () => {
    const sqs = fakeSqs();
    const loose = sqsRecord({ messageId: "m-1", body: "{}", queueArn: "not-an-arn" });

    const { changed, warned } = await settle([loose], "standard", ["m-1"], sqs.client);

    expect(changed).toBe(0);
    expect(sqs.requests).toEqual([]);
    expect(warned.map((w) => w.data)).toEqual([
      { messageId: "m-1", error: expect.stringMatching(/is not an ARN/) },
    ]);
  });

  it("lazyChangeVisibility: a failed load fails that call's changes, and the next call loads again", async () => {
    const sqs = fakeSqs();
    let loads = 0;
    const change = lazyChangeVisibility({}, async () => {
      loads += 1;
      if (loads === 1) throw new Error("chunk failed to load");
      return { changeMessageVisibility, sqsClient: () => sqs.client } as never;
    });
    const entry = [{ messageId: "m-1", receiptHandle: "h", visibilityTimeoutSeconds: 2 }];
    const signal = new AbortController().signal;

    await expect(change(QUEUE_URL, entry, signal)).rejects.toThrow(/chunk failed to load/);
    expect(await change(QUEUE_URL, entry, signal)).toEqual([]);
    expect(sqs.requests).toHaveLength(1);
  });
});
