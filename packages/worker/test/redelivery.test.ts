// The settle path of the retry backoff (src/redelivery.ts, src/sqs-visibility.ts) against a faked SQS
// client: which ChangeMessageVisibilityBatch requests go out for a batch's reported jobs, and that a
// change that fails loses nothing (the job is reported either way, docs/aws-semantics.md §2.3, §2.5).
import type { ChangeMessageVisibilityBatchCommand } from "@aws-sdk/client-sqs";
import { type BatchOutcome, processSqsBatch, processSqsFifoBatch } from "@mcp-pipeline/batch";
import { TransientError } from "@mcp-pipeline/contracts";
import { lambdaContext, sqsRecord } from "@mcp-pipeline/testing";
import type { SQSRecord } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { backOffRedeliveries, lazyChangeVisibility, type Redelivery } from "../src/redelivery.js";
import { changeMessageVisibility } from "../src/sqs-visibility.js";

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

describe("backOffRedeliveries: the reported jobs' visibility, set on their source queue", () => {
  it("standard queue: one request with each reported job's backoff; succeeded jobs and the last receive untouched", async () => {
    const records = [standard("ok-1"), standard("m-1", 1), standard("m-2", 3), standard("m-last", 5)];
    const outcome = await outcomeOf(records, false, new Set(["m-1", "m-2", "m-last"]));
    const sqs = fakeSqs();
    const { logger, seen } = warnings();

    const changed = await backOffRedeliveries(
      records,
      outcome,
      "standard",
      redelivery(sqs.client),
      lambdaContext(),
      logger,
    );

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
    expect(seen).toEqual([]);
  });

  it("more than ten reported jobs: requests of at most ten entries (SQS's limit, §2.5)", async () => {
    const records = Array.from({ length: 23 }, (_, i) => standard(`m-${i}`));
    const outcome = await outcomeOf(records, false, new Set(records.map((r) => r.messageId)));
    const sqs = fakeSqs();

    const changed = await backOffRedeliveries(
      records,
      outcome,
      "standard",
      redelivery(sqs.client),
      lambdaContext(),
      warnings().logger,
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
    const outcome = await outcomeOf(records, true, new Set(["a2", "c1"]));
    const sqs = fakeSqs();

    await backOffRedeliveries(
      records,
      outcome,
      "fifo",
      redelivery(sqs.client),
      lambdaContext(),
      warnings().logger,
    );

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
    const records = [standard("m-1"), standard("m-2")];
    const outcome = await outcomeOf(records, false, new Set(["m-1", "m-2"]));
    const sqs = {
      send: async () => {
        throw Object.assign(new Error("Access to the resource is denied"), { name: "AccessDenied" });
      },
    } as unknown as Parameters<typeof changeMessageVisibility>[0];
    const { logger, seen } = warnings();

    const changed = await backOffRedeliveries(
      records,
      outcome,
      "standard",
      redelivery(sqs),
      lambdaContext(),
      logger,
    );

    expect(changed).toBe(0);
    expect(seen).toEqual([
      {
        message: expect.stringMatching(/returns after the visibility timeout/),
        data: { messageId: "m-1", error: expect.stringMatching(/denied/) },
      },
      {
        message: expect.stringMatching(/returns after the visibility timeout/),
        data: { messageId: "m-2", error: expect.stringMatching(/denied/) },
      },
    ]);
    // What the function answers is the batch outcome's: both are still reported for retry.
    expect(outcome.outcomes.map((o) => o.status)).toEqual(["failed", "failed"]);
  });

  it("an entry SQS refuses (a stale receipt handle): a warning for that job only", async () => {
    const records = [standard("m-1"), standard("m-2")];
    const outcome = await outcomeOf(records, false, new Set(["m-1", "m-2"]));
    const sqs = fakeSqs(() => ({
      Failed: [{ Id: "1", Code: "ReceiptHandleIsInvalid", Message: "The input receipt handle is invalid." }],
    }));
    const { logger, seen } = warnings();

    const changed = await backOffRedeliveries(
      records,
      outcome,
      "standard",
      redelivery(sqs.client),
      lambdaContext(),
      logger,
    );

    expect(changed).toBe(1);
    expect(seen.map((w) => w.data)).toEqual([
      { messageId: "m-2", error: expect.stringMatching(/^ReceiptHandleIsInvalid: /) },
    ]);
  });

  it("no time left in the invocation: no request, so the answer cannot turn into a timeout", async () => {
    const records = [standard("m-1")];
    const outcome = await outcomeOf(records, false, new Set(["m-1"]));
    const sqs = fakeSqs();
    const { logger, seen } = warnings();

    const changed = await backOffRedeliveries(
      records,
      outcome,
      "standard",
      redelivery(sqs.client),
      { getRemainingTimeInMillis: () => 100 },
      logger,
    );

    expect(changed).toBe(0);
    expect(sqs.requests).toEqual([]);
    expect(seen.map((w) => w.data)).toEqual([{ messageId: "m-1", error: "no time left in the invocation" }]);
  });

  it("an event source ARN that is not a queue's: a warning, no request", async () => {
    const records = [sqsRecord({ messageId: "m-1", body: "{}", queueArn: "not-an-arn" })];
    const outcome = await outcomeOf(records, false, new Set(["m-1"]));
    const sqs = fakeSqs();
    const { logger, seen } = warnings();

    expect(
      await backOffRedeliveries(
        records,
        outcome,
        "standard",
        redelivery(sqs.client),
        lambdaContext(),
        logger,
      ),
    ).toBe(0);
    expect(sqs.requests).toEqual([]);
    expect(seen.map((w) => w.data)).toEqual([
      { messageId: "m-1", error: expect.stringMatching(/is not an ARN/) },
    ]);
  });

  it("lazyChangeVisibility: a failed load fails that call's changes, and the next call loads again", async () => {
    const sqs = fakeSqs();
    let loads = 0;
    const change = lazyChangeVisibility(async () => {
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
