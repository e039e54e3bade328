import { decodeLifecycleEvent, type SchemaIssue } from "@mcp-pipeline/contracts";
import {
  assertNoPrototypePollution,
  type BadInput,
  type BadInputExpectations,
  badDocuments,
  badInputTable,
  DECODE_ERROR_CLASS,
  type DecodeErrorCode,
  kinesisRecord,
  kinesisRecordWithRawData,
  lambdaContext,
  lifecycleEventShape,
} from "@mcp-pipeline/emulators/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { processToolCallEvents } from "../../src/core.js";
import { Stack } from "../stack.js";

/**
 * Kinesis data, the processor's boundary (issue 13 §4): every bad record of the corpus, between two good
 * records of its partition key, is quarantined in S3 with its bytes intact and its reason, and acknowledged
 * (no batch item failure, docs/aws-semantics.md §1.4); its neighbours are applied. Records of the largest
 * size a stream holds (§1.8) included.
 */

const PARTITION_KEY = "session-bad";
/** The longest reason message a record of the corpus may get: its issues, never the record's own values. */
const REASON_MESSAGE_BOUND = 1_024;
let serial = 0;

const started = (callId: string) =>
  lifecycleEventShape({ sessionId: PARTITION_KEY, callId, tool: "echo" }).valid;

const corpus = badDocuments(
  lifecycleEventShape({ sessionId: PARTITION_KEY, callId: "call-bad", tool: "echo" }),
);

let stack: Stack;
beforeAll(async () => {
  stack = await Stack.start();
});
afterAll(() => stack.stop());
beforeEach(() => stack.reset());

/** The bad record between two good ones of its key: what became of each. */
async function run(input: BadInput<Uint8Array>) {
  const n = ++serial;
  const before = `call-${n}-before`;
  const after = `call-${n}-after`;
  const bad = kinesisRecordWithRawData(
    { partitionKey: PARTITION_KEY, sequence: 1 },
    Buffer.from(input.value).toString("base64"),
  );
  const records = [
    kinesisRecord({ partitionKey: PARTITION_KEY, data: started(before), sequence: 0 }),
    bad,
    kinesisRecord({ partitionKey: PARTITION_KEY, data: started(after), sequence: 2 }),
  ];
  const { response, summary } = await processToolCallEvents(records, lambdaContext(), stack.deps());
  assertNoPrototypePollution();
  // Never reported for retry (it would block the shard), never lost: quarantined or applied.
  expect(response).toEqual({ batchItemFailures: [] });
  const calls = await stack.calls();
  expect(calls.has(before) && calls.has(after)).toBe(true);
  return { bad, summary, calls, quarantined: await stack.quarantined() };
}

/** Quarantined with its bytes, its key and a reason naming the problem (and the field, for a schema violation). */
async function expectQuarantined(input: BadInput<Uint8Array>, code: DecodeErrorCode, path?: string) {
  const { bad, summary, quarantined } = await run(input);
  expect(summary).toMatchObject({ quarantined: 1, failed: 0 });
  expect(quarantined).toHaveLength(1);
  const [record] = quarantined;
  expect(record).toMatchObject({
    source: { partitionKey: PARTITION_KEY, sequenceNumber: bad.kinesis.sequenceNumber },
    data: bad.kinesis.data,
    reason: { code },
  });
  expect(Buffer.from(record?.data ?? "", "base64").equals(Buffer.from(input.value))).toBe(true);
  const decoded = decodeLifecycleEvent(bad.kinesis.data);
  expect(decoded.ok).toBe(false);
  if (decoded.ok) return;
  expect(decoded.error.name).toBe(DECODE_ERROR_CLASS[code]);
  expect(record?.reason.message).toBe(decoded.error.message);
  // What the reason echoes of the record is bounded, whatever the record holds.
  expect(record?.reason.message.length).toBeLessThanOrEqual(REASON_MESSAGE_BOUND);
  if (path !== undefined) {
    const { issues } = (record?.reason.details ?? { issues: [] }) as { issues: SchemaIssue[] };
    expect(issues.map((i) => i.path)).toContain(path);
  }
}

/** Read as an event: applied like its neighbours, and nothing planted anywhere. */
async function expectApplied(input: BadInput<Uint8Array>) {
  const { summary, calls, quarantined } = await run(input);
  expect(summary).toMatchObject({ applied: 3, quarantined: 0 });
  expect(quarantined).toEqual([]);
  expect(calls.get("call-bad")).toMatchObject({ status: "started", tool: "echo" });
  expect(Object.getPrototypeOf(calls.get("call-bad"))).toBe(Object.prototype);
}

const expectations: BadInputExpectations<Uint8Array> = {
  empty: (input) =>
    input.name === "{}"
      ? expectQuarantined(input, "schema-violation", "specVersion")
      : expectQuarantined(input, "bad-json"),
  truncated: (input) =>
    expectQuarantined(
      input,
      input.name === "cut inside a multi-byte character" ? "bad-encoding" : "bad-json",
    ),
  oversized: (input) => expectQuarantined(input, "schema-violation", "tool"),
  "wrong type": (input) => {
    const path = input.name.startsWith("tool")
      ? "tool"
      : input.name.startsWith("attempt")
        ? "attempt"
        : "(root)";
    return expectQuarantined(input, "schema-violation", path);
  },
  "wrong version": (input) => expectQuarantined(input, "unsupported-version"),
  "invalid UTF-8": (input) => expectQuarantined(input, "bad-encoding"),
  "deeply nested": (input) => {
    // A key the format does not have is ignored, as a newer minor version's fields are (decode.test.ts).
    if (input.name.endsWith("a key the format does not have")) return expectApplied(input);
    // The error names the version it refuses, bounded: the whole value would throw RangeError (issue 24).
    if (input.name.endsWith("in specVersion")) return expectQuarantined(input, "unsupported-version");
    return expectQuarantined(input, "schema-violation", input.name.includes("arrays") ? "(root)" : "tool");
  },
  "hostile values": (input) => {
    if (input.name === "every field under __proto__")
      return expectQuarantined(input, "schema-violation", "specVersion");
    if (input.name.startsWith("__proto__ and constructor")) return expectApplied(input);
    return expectQuarantined(input, "schema-violation", input.name.split(" ")[0]);
  },
};

describe("Kinesis data: every bad record is quarantined with its bytes and reason, never retried or lost", () => {
  it.each(badInputTable(corpus, expectations))("$label", ({ run }) => run());
});
