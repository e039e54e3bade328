import { kinesisRecord, sqsRecord } from "@mcp-pipeline/emulators/testing";
import { describe, expect, it } from "vitest";
import {
  decodeRecord,
  kinesisRecordIssues,
  MalformedRecordError,
  messageIdOf,
  partitionKeyOf,
  receiveCountOf,
  sequenceNumberOf,
  sqsRecordIssues,
} from "../../src/index.js";

const hostile = {
  get kinesis(): never {
    throw new Error("a getter that throws");
  },
};

describe("reading a Lambda record without trusting it (issue 24, defect 3)", () => {
  it("answers undefined for what a record lacks or holds with the wrong type, never a throw", () => {
    const good = kinesisRecord({ partitionKey: "k", data: {}, sequence: 1 });
    expect(sequenceNumberOf(good)).toBe(good.kinesis.sequenceNumber);
    expect(partitionKeyOf(good)).toBe("k");
    for (const record of [
      null,
      42,
      "x",
      [],
      {},
      { kinesis: null },
      { kinesis: { sequenceNumber: 7 } },
      hostile,
    ]) {
      expect(sequenceNumberOf(record)).toBeUndefined();
      expect(partitionKeyOf(record)).toBeUndefined();
    }
    expect(sequenceNumberOf({ kinesis: { sequenceNumber: "12ab" } })).toBeUndefined();
    expect(receiveCountOf(sqsRecord({ messageId: "m", body: "b", receiveCount: 3 }))).toBe(3);
    expect(receiveCountOf({ attributes: { ApproximateReceiveCount: 3 } })).toBeUndefined();
    expect(receiveCountOf({ attributes: { ApproximateReceiveCount: "0" } })).toBeUndefined();
    expect(messageIdOf({ messageId: "" })).toBeUndefined();
  });

  it("names what a consumer needs and a record lacks: the field and the type found, never the value", () => {
    expect(kinesisRecordIssues(kinesisRecord({ partitionKey: "k", data: {}, sequence: 1 }))).toEqual([]);
    expect(kinesisRecordIssues(null)).toEqual([
      { path: "(root)", message: "expected a Kinesis record (an object), received null" },
    ]);
    expect(
      kinesisRecordIssues({ kinesis: { data: { deep: "x".repeat(100_000) }, partitionKey: "" } }),
    ).toEqual([
      { path: "kinesis.data", message: "expected string, received object" },
      { path: "kinesis.partitionKey", message: "expected a non-empty string, received string" },
      { path: "kinesis.sequenceNumber", message: "required" },
    ]);
    const { attributes: _none, ...noAttributes } = sqsRecord({ messageId: "m", body: "b" });
    expect(sqsRecordIssues(noAttributes)).toEqual([{ path: "attributes", message: "required" }]);
    expect(sqsRecordIssues({ ...sqsRecord({ messageId: "m", body: "b", groupId: "g" }), body: 1 })).toEqual([
      { path: "body", message: "expected string, received number" },
    ]);
  });

  it("decodeRecord cannot throw: a malformed envelope, or a decoder that throws, is the record's MalformedRecordError", () => {
    const decoded = decodeRecord(null, sqsRecordIssues, () => ({ ok: true, value: 1 }));
    expect(!decoded.ok && decoded.error).toBeInstanceOf(MalformedRecordError);
    const bug = new RangeError("Maximum call stack size exceeded");
    const crashed = decodeRecord(sqsRecord({ messageId: "m", body: "b" }), sqsRecordIssues, () => {
      throw bug;
    });
    expect(crashed.ok).toBe(false);
    if (crashed.ok) return;
    expect(crashed.error).toMatchObject({
      name: "MalformedRecordError",
      code: "malformed-record",
      kind: "permanent",
      issues: [{ path: "(record)", message: 'could not be read: "Maximum call stack size exceeded"' }],
      cause: bug,
    });
  });
});
