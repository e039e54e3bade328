/**
 * The mover's decisions alone (no emulator): which received messages it moves, leaves or has already seen,
 * and what it counts as taken from the source's answer. recovery.test.ts runs whole moves on the emulators.
 */
import type { Message } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { bodyDigest, emptyMoverLedger, settleSend, sortReceived } from "../../src/move-messages.js";

const STARTED_AT = 1_000;

function message(id: string, options: { sentAt?: number; group?: string; reason?: string } = {}): Message {
  return {
    MessageId: id,
    ReceiptHandle: `receipt-${id}`,
    Body: `body-${id}`,
    Attributes: {
      SentTimestamp: String(options.sentAt ?? STARTED_AT - 1),
      ...(options.group ? { MessageGroupId: options.group } : {}),
    },
    MessageAttributes: options.reason
      ? { "pipeline.reason.code": { DataType: "String", StringValue: options.reason } }
      : {},
  };
}

const ids = (messages: readonly Message[]) => messages.map((m) => m.MessageId);

describe("sortReceived", () => {
  it("moves what was in the DLQ at the start and leaves what arrived after it, counted", () => {
    const ledger = emptyMoverLedger();
    const { fresh, unseen } = sortReceived([message("a"), message("b", { sentAt: STARTED_AT + 1 })], ledger, {
      startedAt: STARTED_AT,
    });
    expect(ids(fresh)).toEqual(["a"]);
    expect(unseen).toBe(2);
    expect(ledger.arrivedAfterStart).toBe(1);
    expect([...ledger.left]).toEqual([["b", "receipt-b"]]);
  });

  it("leaves a message of another reason, and every later message of its FIFO group, so the group's order holds (§3)", () => {
    const ledger = emptyMoverLedger();
    const { fresh } = sortReceived(
      [
        message("a1", { group: "a", reason: "not-a-job" }),
        message("a2", { group: "a", reason: "schema" }),
        message("b1", { group: "b", reason: "schema" }),
      ],
      ledger,
      { startedAt: STARTED_AT, reason: "schema" },
    );
    expect(ids(fresh)).toEqual(["b1"]);
    expect(ledger.leftByChoice).toBe(2);
    expect([...ledger.heldGroups]).toEqual(["a"]);
  });

  it("takes at most `max` over the whole run: those moved before count", () => {
    const ledger = { ...emptyMoverLedger(), moved: 2 };
    const { fresh } = sortReceived([message("a"), message("b"), message("c")], ledger, {
      startedAt: STARTED_AT,
      max: 3,
    });
    expect(ids(fresh)).toEqual(["a"]);
    expect(ledger.leftByChoice).toBe(2);
  });

  it("counts nothing twice: a message left before and received again only gets its newest receipt kept", () => {
    const ledger = emptyMoverLedger();
    sortReceived([message("a", { sentAt: STARTED_AT + 5 })], ledger, { startedAt: STARTED_AT });
    const again = { ...message("a", { sentAt: STARTED_AT + 5 }), ReceiptHandle: "receipt-a-2" };
    const { fresh, unseen } = sortReceived([again], ledger, { startedAt: STARTED_AT });
    expect(fresh).toEqual([]);
    expect(unseen).toBe(0);
    expect(ledger.arrivedAfterStart).toBe(1);
    expect(ledger.left.get("a")).toBe("receipt-a-2");
  });
});

describe("settleSend", () => {
  it("takes what the source accepted under a new id; a refused entry stays in the DLQ, counted failed", () => {
    const ledger = emptyMoverLedger();
    const sent = [message("a"), message("b")];
    for (const m of sent) ledger.left.set(m.MessageId ?? "", m.ReceiptHandle ?? "");
    const taken = settleSend(
      sent,
      {
        Successful: [{ Id: "0", MessageId: "new-a", MD5OfMessageBody: "" }],
        Failed: [{ Id: "1", SenderFault: true, Code: "AccessDenied" }],
      },
      ledger,
    );
    expect(ids(taken)).toEqual(["a"]);
    expect(ledger.failed).toBe(1);
    expect([...ledger.left.keys()]).toEqual(["b"]);
    expect(ledger.movedDigests).toEqual([bodyDigest("body-a")]);
  });

  it("does not take a message answered with an id sent before: SQS de-duplicated it and dropped it (§3)", () => {
    const ledger = emptyMoverLedger();
    settleSend(
      [message("a")],
      { Successful: [{ Id: "0", MessageId: "new-a", MD5OfMessageBody: "" }] },
      ledger,
    );
    const taken = settleSend(
      [message("b")],
      { Successful: [{ Id: "0", MessageId: "new-a", MD5OfMessageBody: "" }] },
      ledger,
    );
    expect(taken).toEqual([]);
    expect(ledger.failed).toBe(1);
    expect(ledger.left.get("b")).toBe("receipt-b");
  });
});
