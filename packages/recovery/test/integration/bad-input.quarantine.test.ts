import { GetRecordsCommand, GetShardIteratorCommand, type KinesisClient } from "@aws-sdk/client-kinesis";
import { GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { EmulatorStack, emulatorClientOptions } from "@mcp-pipeline/emulators";
import {
  assertNoPrototypePollution,
  type BadInput,
  type BadInputExpectations,
  badDocuments,
  badInputTable,
  KINESIS_RECORD_MAX_BYTES,
  TEST_STREAM_ARN,
} from "@mcp-pipeline/emulators/testing";
import {
  QUARANTINE_FORMAT_VERSION,
  type QuarantineRecord,
  quarantineKeyFor,
  readQuarantineRecord,
  writeQuarantineRecord,
} from "@mcp-pipeline/recovery/quarantine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countQuarantine, listQuarantine, replayQuarantine, scanQuarantine } from "../../src/index.js";

/**
 * Quarantine objects, the boundary of packages/recovery's reader and of the replay that lists them
 * (issue 13 §4). A bad object beside a good one: reading it fails with a QuarantineFormatError naming
 * the key and the field; the listing reports it as unreadable and goes on (issue 26, item 7: one bad
 * object never hides the others), so a replay puts back the good one alone; both objects stay in the
 * bucket byte for byte. An object the format accepts is replayed with its bytes.
 */

const STREAM = "tool-call-events";
let stack: EmulatorStack;
let s3: S3Client;
let kinesis: KinesisClient;

beforeAll(async () => {
  stack = await EmulatorStack.start({ sqsS3: true, kinesis: true });
  s3 = s3Client(emulatorClientOptions(stack.sqsS3));
  kinesis = kinesisClient(emulatorClientOptions(stack.kinesis));
  await stack.createStream(STREAM);
});
afterAll(async () => {
  s3?.destroy();
  kinesis?.destroy();
  await stack?.stop();
});

const quarantined = (sequence: string, partitionKey: string, data: string): QuarantineRecord => ({
  formatVersion: QUARANTINE_FORMAT_VERSION,
  source: {
    kind: "kinesis",
    streamArn: TEST_STREAM_ARN,
    shardId: "shardId-000000000000",
    sequenceNumber: sequence,
    partitionKey,
    approximateArrivalTimestamp: 1_795_996_800.123,
  },
  data,
  reason: { code: "bad-json", message: "payload is not JSON" },
  quarantinedAt: "2026-11-30T10:00:00.000Z",
  quarantinedBy: "processor",
});

/** Large enough for the object of a 1 MiB record (§1.8): its bytes as base64 and the rest. */
const MAX_OBJECT_BYTES = Math.ceil((KINESIS_RECORD_MAX_BYTES * 4) / 3) + 4_096;

const BAD_DATA = Buffer.from("{ not json").toString("base64");
const corpus = badDocuments({
  valid: quarantined("49590338271490256608559692538361571095921575989136588898", "session-bad", BAD_DATA),
  maxBytes: MAX_OBJECT_BYTES,
  stringField: "source.partitionKey",
  numberField: "source.approximateArrivalTimestamp",
  objectField: "reason",
  version: { field: "formatVersion", unsupported: [2, "1", 0, null] },
});

let serial = 0;

async function objectBytes(bucket: string, key: string): Promise<Uint8Array> {
  const { Body } = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (await Body?.transformToByteArray()) ?? new Uint8Array();
}

/** Every record of the stream, as partition key and base64 data. */
async function streamRecords(): Promise<{ partitionKey: string; data: string }[]> {
  const { ShardIterator } = await kinesis.send(
    new GetShardIteratorCommand({
      StreamName: STREAM,
      ShardId: "shardId-000000000000",
      ShardIteratorType: "TRIM_HORIZON",
    }),
  );
  const { Records = [] } = await kinesis.send(new GetRecordsCommand({ ShardIterator, Limit: 10_000 }));
  return Records.map((r) => ({
    partitionKey: r.PartitionKey ?? "",
    data: Buffer.from(r.Data ?? []).toString("base64"),
  }));
}

/** A fresh bucket with a good object and the bad one. */
async function setUp(input: BadInput<Uint8Array>) {
  const n = ++serial;
  const bucket = `quarantine-bad-${n}`;
  await stack.createBucket(bucket);
  const goodData = Buffer.from(`{"case":${n}}`).toString("base64");
  const good = quarantined(
    `4959033827149025660855969253836157109592157598913${String(n).padStart(7, "0")}`,
    `session-${n}`,
    goodData,
  );
  const { key: goodKey } = await writeQuarantineRecord(s3, bucket, good);
  const badKey = `kinesis/${STREAM}/2026/11/30/shardId-000000000000/bad-${n}.json`;
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: badKey, Body: input.value }));
  return { bucket, good, goodKey, badKey, before: await streamRecords() };
}

/**
 * Refused with the key and the problem, and reported by the listing, which goes on: the good record alone
 * is replayed; the bad object is unchanged.
 */
async function expectRefused(input: BadInput<Uint8Array>, problem: string | RegExp) {
  const { bucket, good, goodKey, badKey, before } = await setUp(input);
  const read = readQuarantineRecord(s3, bucket, badKey);
  await expect(read).rejects.toMatchObject({ name: "QuarantineFormatError", key: badKey });
  await expect(read).rejects.toThrow(problem);
  const scan = await scanQuarantine(s3, bucket);
  assertNoPrototypePollution();
  expect(scan.unreadable).toEqual([
    { key: badKey, error: { name: "QuarantineFormatError", message: expect.stringMatching(problem) } },
  ]);
  expect(scan.entries.map((e) => e.key)).toEqual([goodKey]);
  const heard: string[] = [];
  expect(
    (await listQuarantine(s3, bucket, {}, { onUnreadable: (o) => heard.push(o.key) })).map((e) => e.key),
  ).toEqual([goodKey]);
  expect(heard).toEqual([badKey]);
  const summary = await replayQuarantine(s3, kinesis, bucket, scan.entries, {
    streamName: STREAM,
    includePermanent: true,
  });
  expect(summary).toMatchObject({ replayed: 1 });
  expect((await streamRecords()).slice(before.length)).toEqual([
    { partitionKey: good.source.partitionKey, data: good.data },
  ]);
  expect(Buffer.from(await objectBytes(bucket, badKey)).equals(Buffer.from(input.value))).toBe(true);
}

/** Read as a quarantine record: counted, and replayed with its bytes and partition key like the good one. */
async function expectReplayed(input: BadInput<Uint8Array>) {
  const { bucket, good, badKey, before } = await setUp(input);
  const entries = await listQuarantine(s3, bucket);
  assertNoPrototypePollution();
  // Both listed: the bad object beside the good one, which is under the key its source gives.
  expect(entries.map((e) => e.key).sort()).toEqual([badKey, quarantineKeyFor(good.source)].sort());
  expect(countQuarantine(entries).total).toBe(2);
  // Both are bad-json, a permanent reason: put back only when asked.
  expect(await replayQuarantine(s3, kinesis, bucket, entries, { streamName: STREAM })).toMatchObject({
    replayed: 0,
    skippedPermanent: 2,
  });
  const summary = await replayQuarantine(s3, kinesis, bucket, entries, {
    streamName: STREAM,
    includePermanent: true,
  });
  expect(summary).toMatchObject({ replayed: 2 });
  const added = (await streamRecords()).slice(before.length);
  expect(added).toEqual(
    expect.arrayContaining([
      { partitionKey: good.source.partitionKey, data: good.data },
      { partitionKey: "session-bad", data: BAD_DATA },
    ]),
  );
}

const PK = "source.partitionKey";
const TS = "source.approximateArrivalTimestamp";

const expectations: BadInputExpectations<Uint8Array> = {
  empty: (input) => expectRefused(input, input.name === "{}" ? "formatVersion:" : "not JSON"),
  truncated: (input) =>
    expectRefused(input, input.name === "cut inside a multi-byte character" ? "not UTF-8" : "not JSON"),
  oversized: (input) => expectRefused(input, `${PK}:`),
  "wrong type": (input) => {
    const path = input.name.startsWith(PK) ? PK : input.name.startsWith(TS) ? TS : null;
    return expectRefused(input, path ? `${path}:` : /expected object/);
  },
  "wrong version": (input) => expectRefused(input, "formatVersion:"),
  // Read leniently, the bad bytes would become U+FFFD and a replay would put the record back under
  // another partition key: refused instead.
  "invalid UTF-8": (input) => expectRefused(input, "not UTF-8"),
  "deeply nested": (input) => {
    if (input.name.includes("arrays")) return expectRefused(input, /expected object/);
    if (input.name.endsWith(`in ${PK}`)) return expectRefused(input, `${PK}:`);
    // Unknown keys are dropped, as z.object does (quarantine/schema.ts); `reason.nested` is among them.
    return expectReplayed(input);
  },
  "hostile values": (input) => {
    if (input.name === "every field under __proto__") return expectRefused(input, "formatVersion:");
    if (input.name.startsWith("__proto__ and constructor") || input.name === `${TS} -0`)
      return expectReplayed(input);
    return expectRefused(input, input.name.startsWith(PK) ? `${PK}:` : `${TS}:`);
  },
};

describe("quarantine objects: a bad object is refused by name and field, reported, skipped, never changed", () => {
  it.each(badInputTable(corpus, expectations))("$label", ({ run }) => run());
});
