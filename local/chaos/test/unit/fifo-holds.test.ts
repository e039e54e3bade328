import { describe, expect, it } from "vitest";
import { FifoHolds, type SqsExchange } from "../../src/fifo-holds.js";

// The AWS JSON protocol's bodies, as the SDK sends them and fauxqs answers (§2.6 for the visibility calls).
const QUEUE = "http://127.0.0.1:4566/000000000000/local-session-jobs.fifo";
const OTHER = "http://127.0.0.1:4566/000000000000/local-tool-jobs";
const bytes = (value: unknown) => Buffer.from(JSON.stringify(value));

function exchange(action: string, request: object, answer: object, at: number, status = 200): SqsExchange {
  return { target: `AmazonSQS.${action}`, request: bytes(request), status, answer: bytes(answer), at };
}

const message = (callId: string, handle: string, messageId = `m-${callId}`) => ({
  MessageId: messageId,
  ReceiptHandle: handle,
  Body: JSON.stringify({ callId, tool: "http.request" }),
});
const receive = (at: number, messages: object[], extra: object = {}, queueUrl = QUEUE) =>
  exchange(
    "ReceiveMessage",
    { QueueUrl: queueUrl, MaxNumberOfMessages: 10, ...extra },
    { Messages: messages },
    at,
  );
const remove = (at: number, handle: string) =>
  exchange("DeleteMessage", { QueueUrl: QUEUE, ReceiptHandle: handle }, {}, at);

function watched(): FifoHolds {
  const holds = new FifoHolds();
  holds.watch(QUEUE, 18_000);
  return holds;
}

describe("the FIFO holds seen at the SQS front", () => {
  it("does not count the time a message waited visible for a poller between two receives", () => {
    // The 100,000-event run's case: hidden for the queue's 18 s, then visible behind other groups' backlog
    // until a poller took it at 100 s; deleted a second later.
    const holds = watched();
    holds.seen(receive(0, [message("j-1", "h-1")]));
    holds.seen(receive(100_000, [message("j-1", "h-2")]));
    holds.seen(remove(101_000, "h-2"));
    expect(holds.held("j-1")).toEqual({ ms: 19_000, receives: 2 });
  });

  it("ends a receive's hold at the deletion of its receipt handle", () => {
    const holds = watched();
    holds.seen(receive(1_000, [message("j-1", "h-1")]));
    holds.seen(remove(3_500, "h-1"));
    expect(holds.held("j-1")).toEqual({ ms: 2_500, receives: 1 });
  });

  it("counts a hide that a ChangeMessageVisibility stretched past the queue's visibility, from the call", () => {
    const holds = watched();
    holds.seen(receive(0, [message("j-1", "h-1")]));
    holds.seen(
      exchange(
        "ChangeMessageVisibility",
        { QueueUrl: QUEUE, ReceiptHandle: "h-1", VisibilityTimeout: 60 },
        {},
        2_000,
      ),
    );
    holds.seen(receive(62_000, [message("j-1", "h-2")]));
    holds.seen(remove(63_000, "h-2"));
    expect(holds.held("j-1")?.ms).toBe(63_000);
  });

  it("applies only the entries of a ChangeMessageVisibilityBatch that SQS took", () => {
    const holds = watched();
    holds.seen(receive(0, [message("j-1", "h-1"), message("j-2", "h-2")]));
    holds.seen(
      exchange(
        "ChangeMessageVisibilityBatch",
        {
          QueueUrl: QUEUE,
          Entries: [
            { Id: "0", ReceiptHandle: "h-1", VisibilityTimeout: 0 },
            { Id: "1", ReceiptHandle: "h-2", VisibilityTimeout: 0 },
          ],
        },
        {
          Successful: [{ Id: "0" }],
          Failed: [{ Id: "1", Code: "ReceiptHandleIsInvalid", SenderFault: true }],
        },
        500,
      ),
    );
    expect(holds.held("j-1", 30_000)?.ms).toBe(500);
    expect(holds.held("j-2", 30_000)?.ms).toBe(18_000);
  });

  it("ends holds at the entries of a DeleteMessageBatch that SQS took", () => {
    const holds = watched();
    holds.seen(receive(0, [message("j-1", "h-1"), message("j-2", "h-2")]));
    holds.seen(
      exchange(
        "DeleteMessageBatch",
        {
          QueueUrl: QUEUE,
          Entries: [
            { Id: "a", ReceiptHandle: "h-1" },
            { Id: "b", ReceiptHandle: "h-2" },
          ],
        },
        { Successful: [{ Id: "b" }], Failed: [{ Id: "a", Code: "InternalError", SenderFault: false }] },
        700,
      ),
    );
    expect(holds.held("j-1", 30_000)?.ms).toBe(18_000);
    expect(holds.held("j-2", 30_000)?.ms).toBe(700);
  });

  it("gives a receive the visibility it asked for instead of the queue's", () => {
    const holds = watched();
    holds.seen(receive(0, [message("j-1", "h-1")], { VisibilityTimeout: 60 }));
    expect(holds.held("j-1", 100_000)?.ms).toBe(60_000);
  });

  it("stops a hold still running at the end of the run there", () => {
    const holds = watched();
    holds.seen(receive(0, [message("j-1", "h-1")]));
    holds.seen(
      exchange(
        "ChangeMessageVisibility",
        { QueueUrl: QUEUE, ReceiptHandle: "h-1", VisibilityTimeout: 43_200 },
        {},
        0,
      ),
    );
    expect(holds.held("j-1", 25_000)?.ms).toBe(25_000);
  });

  it("takes the longest-held of a job's messages, not their sum", () => {
    const holds = watched();
    holds.seen(receive(0, [message("j-1", "h-1", "m-a")]));
    holds.seen(remove(4_000, "h-1"));
    holds.seen(receive(5_000, [message("j-1", "h-2", "m-b")]));
    holds.seen(remove(6_000, "h-2"));
    expect(holds.held("j-1")).toEqual({ ms: 4_000, receives: 1 });
  });

  it("ignores other queues, failed answers, bodies without a call and anything before the queue is watched", () => {
    const holds = new FifoHolds();
    holds.seen(receive(0, [message("j-0", "h-0")]));
    holds.watch(QUEUE, 18_000);
    holds.seen(receive(0, [message("j-1", "h-1")], {}, OTHER));
    holds.seen({ ...receive(0, [message("j-2", "h-2")]), status: 500 });
    holds.seen(receive(0, [{ MessageId: "m-3", ReceiptHandle: "h-3", Body: "not json" }]));
    holds.seen({
      target: "AmazonSQS.ReceiveMessage",
      request: Buffer.from("Action=ReceiveMessage"),
      status: 200,
      answer: Buffer.from("<xml/>"),
      at: 0,
    });
    for (const callId of ["j-0", "j-1", "j-2"]) expect(holds.held(callId)).toBeUndefined();
  });

  // The measure must count what the queue did, in every form the queue takes (fauxqs 2.4.1, the queue the
  // chaos run has): what it applies and the front reads otherwise is a hold the product gets away with.

  it("counts a ChangeMessageVisibility whose VisibilityTimeout came as a string, as the queue applies it", () => {
    // fauxqs checks the range with `<` and `>` and sets the deadline at now + timeout * 1000: "60" hides for 60 s.
    const holds = watched();
    holds.seen(receive(0, [message("j-1", "h-1")]));
    holds.seen(
      exchange(
        "ChangeMessageVisibility",
        { QueueUrl: QUEUE, ReceiptHandle: "h-1", VisibilityTimeout: "60" },
        {},
        2_000,
      ),
    );
    holds.seen(receive(62_000, [message("j-1", "h-2")]));
    holds.seen(remove(63_000, "h-2"));
    expect(holds.held("j-1")?.ms).toBe(63_000);
  });

  it("counts a hide the queue never ends (a VisibilityTimeout that is no number) until the message is deleted", () => {
    // fauxqs lets "forever" through its range check, and a deadline of NaN is never reached: the message
    // stays in flight, and its FIFO group locked, until it is deleted.
    const holds = watched();
    holds.seen(receive(0, [message("j-1", "h-1")]));
    holds.seen(
      exchange(
        "ChangeMessageVisibilityBatch",
        { QueueUrl: QUEUE, Entries: [{ Id: "0", ReceiptHandle: "h-1", VisibilityTimeout: "forever" }] },
        { Successful: [{ Id: "0" }], Failed: [] },
        1_000,
      ),
    );
    holds.seen(remove(300_000, "h-1"));
    expect(holds.held("j-1")?.ms).toBe(300_000);
    // A batch entry without a VisibilityTimeout passes fauxqs's checks the same way.
    holds.seen(receive(0, [message("j-2", "h-2")]));
    holds.seen(
      exchange(
        "ChangeMessageVisibilityBatch",
        { QueueUrl: QUEUE, Entries: [{ Id: "0", ReceiptHandle: "h-2" }] },
        { Successful: [{ Id: "0" }], Failed: [] },
        1_000,
      ),
    );
    expect(holds.held("j-2", 200_000)?.ms).toBe(200_000);
  });

  it("reads an action named without the AmazonSQS. prefix, as the queue dispatches it", () => {
    // fauxqs takes the action as `target.replace("AmazonSQS.", "")`: a bare "ChangeMessageVisibility" works.
    const holds = watched();
    holds.seen(receive(0, [message("j-1", "h-1")]));
    holds.seen({
      ...exchange(
        "ChangeMessageVisibility",
        { QueueUrl: QUEUE, ReceiptHandle: "h-1", VisibilityTimeout: 600 },
        {},
        1_000,
      ),
      target: "ChangeMessageVisibility",
    });
    expect(holds.held("j-1", 100_000)?.ms).toBe(100_000);
  });

  it("gives later receives the visibility a SetQueueAttributes gave the queue", () => {
    // Any client of the emulator may set the queue's visibility; the queue's receives then hide for that long.
    const holds = watched();
    holds.seen(
      exchange("SetQueueAttributes", { QueueUrl: QUEUE, Attributes: { VisibilityTimeout: "600" } }, {}, 0),
    );
    holds.seen(receive(1_000, [message("j-1", "h-1")]));
    expect(holds.held("j-1", 101_000)?.ms).toBe(100_000);
  });

  it("sums a hold split across many receives, each shorter than the queue's visibility", () => {
    // A product that hands the message back just before its visibility ends, again and again, holds its
    // group for the sum: each short hide counts, the time visible between them does not.
    const holds = watched();
    for (let n = 0; n < 10; n++) {
      holds.seen(receive(n * 20_000, [message("j-1", `h-${n}`)]));
      holds.seen(
        exchange(
          "ChangeMessageVisibility",
          { QueueUrl: QUEUE, ReceiptHandle: `h-${n}`, VisibilityTimeout: 0 },
          {},
          n * 20_000 + 17_000,
        ),
      );
    }
    expect(holds.held("j-1", 1_000_000)).toEqual({ ms: 170_000, receives: 10 });
  });

  it("does not end a hold at a deletion with an earlier receive's receipt handle", () => {
    // SQS answers a DeleteMessage with a stale handle 200 and may keep the message (fauxqs does: the handle
    // is no longer in flight); the hold of the current receive goes on to its own end.
    const holds = watched();
    holds.seen(receive(0, [message("j-1", "h-1")]));
    holds.seen(receive(20_000, [message("j-1", "h-2")]));
    holds.seen(remove(21_000, "h-1"));
    expect(holds.held("j-1", 100_000)).toEqual({ ms: 36_000, receives: 2 });
  });

  it("ends no hold for a batch answer's Ids that the request did not have", () => {
    const holds = watched();
    holds.seen(receive(0, [message("j-1", "h-1")]));
    holds.seen(
      exchange(
        "DeleteMessageBatch",
        { QueueUrl: QUEUE, Entries: [{ Id: "a", ReceiptHandle: "h-other" }] },
        { Successful: [{ Id: "a" }, { Id: "b" }], Failed: [] },
        500,
      ),
    );
    expect(holds.held("j-1", 30_000)?.ms).toBe(18_000);
  });

  it("follows the visibility calls of a queue URL with a trailing slash, as the queue resolves it", () => {
    // fauxqs 2.4.1 resolves a QueueUrl by its last non-empty path segment (SqsStore.parseQueueUrl), so
    // ".../local-session-jobs.fifo/" names this queue: a product that set its visibility that way held
    // its group unseen.
    const holds = watched();
    holds.seen(
      exchange(
        "SetQueueAttributes",
        { QueueUrl: `${QUEUE}/`, Attributes: { VisibilityTimeout: "300" } },
        {},
        0,
      ),
    );
    holds.seen(receive(1_000, [message("j-1", "h-1")]));
    holds.seen(receive(1_000, [message("j-2", "h-2")]));
    holds.seen(
      exchange(
        "ChangeMessageVisibility",
        { QueueUrl: `${QUEUE}//`, ReceiptHandle: "h-2", VisibilityTimeout: 600 },
        {},
        2_000,
      ),
    );
    expect(holds.held("j-1", 1_000_000)?.ms).toBe(300_000);
    expect(holds.held("j-2", 1_000_000)?.ms).toBe(601_000);
  });

  it("counts the delay a SetQueueAttributes gave the queue as a hold of each message sent after it", () => {
    // fauxqs 2.4.1 applies a queue's DelaySeconds to a FIFO queue's sends: each message stays hidden that
    // long before any receive can have it, its group held, though nothing was delivered yet.
    const holds = watched();
    holds.seen(
      exchange("SetQueueAttributes", { QueueUrl: QUEUE, Attributes: { DelaySeconds: "100" } }, {}, 0),
    );
    const body = (callId: string) => JSON.stringify({ callId, tool: "http.request" });
    holds.seen(
      exchange(
        "SendMessage",
        { QueueUrl: QUEUE, MessageBody: body("j-1"), MessageGroupId: "g" },
        { MessageId: "m-j-1" },
        1_000,
      ),
    );
    holds.seen(
      exchange(
        "SendMessageBatch",
        {
          QueueUrl: QUEUE,
          Entries: [
            { Id: "0", MessageBody: body("j-2"), MessageGroupId: "g" },
            { Id: "1", MessageBody: body("j-3"), MessageGroupId: "g" },
          ],
        },
        { Successful: [{ Id: "0", MessageId: "m-j-2" }], Failed: [{ Id: "1" }] },
        2_000,
      ),
    );
    holds.seen(receive(101_000, [message("j-1", "h-1")]));
    holds.seen(remove(102_000, "h-1"));
    holds.seen(receive(102_000, [message("j-2", "h-2")]));
    holds.seen(remove(103_000, "h-2"));
    expect(holds.held("j-1")).toEqual({ ms: 101_000, receives: 1 });
    expect(holds.held("j-2")).toEqual({ ms: 101_000, receives: 1 });
  });

  it("adds no delay for a send SQS deduplicated into a message it already had", () => {
    // A FIFO send within the deduplication interval is answered with the earlier message's Id (§3): no
    // new message, so no new delay.
    const holds = watched();
    const send = (at: number) =>
      exchange(
        "SendMessage",
        { QueueUrl: QUEUE, MessageBody: JSON.stringify({ callId: "j-1" }), MessageGroupId: "g" },
        { MessageId: "m-j-1" },
        at,
      );
    holds.seen(send(0));
    holds.seen(receive(1_000, [message("j-1", "h-1")]));
    holds.seen(
      exchange("SetQueueAttributes", { QueueUrl: QUEUE, Attributes: { DelaySeconds: "100" } }, {}, 1_500),
    );
    holds.seen(send(2_000));
    holds.seen(remove(3_000, "h-1"));
    expect(holds.held("j-1", 500_000)).toEqual({ ms: 2_000, receives: 1 });
  });
});
