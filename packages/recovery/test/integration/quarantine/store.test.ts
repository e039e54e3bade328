import { ListObjectsV2Command, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import {
  createBucketWhenReady,
  emulatorClientOptions,
  type RunningEmulator,
  startSqsS3Endpoint,
} from "@mcp-pipeline/emulators";
import { kinesisRecord, kinesisRecordWithRawData } from "@mcp-pipeline/emulators/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  InvalidQuarantineRecordError,
  kinesisDataOf,
  kinesisSourceOf,
  QuarantineFormatError,
  type QuarantineRecord,
  quarantineKeyFor,
  readQuarantineRecord,
  UNKNOWN_PARTITION_KEY,
  writeQuarantineRecord,
} from "../../../src/quarantine/index.js";

let emulator: RunningEmulator;
let s3: S3Client;
const bucket = "quarantine-test";

beforeAll(async () => {
  // fauxqs (with S3's conditional writes, local/emulators/src/fauxqs-s3.mjs), or moto's server under
  // the vitest project "moto": the suite must pass on both.
  emulator = await startSqsS3Endpoint();
  s3 = s3Client(emulatorClientOptions(emulator));
  await createBucketWhenReady(s3, { Bucket: bucket });
});
afterAll(async () => {
  s3.destroy();
  await emulator.stop();
});

const record = (sequence: number): QuarantineRecord => {
  const raw = kinesisRecordWithRawData(
    { partitionKey: "session-9", sequence, arrivalEpochSeconds: 1_796_032_800.5 },
    "eyJub3QiOiJ2YWxpZA==",
  );
  return {
    formatVersion: 1,
    source: kinesisSourceOf(raw),
    data: raw.kinesis.data,
    reason: { code: "schema-violation", message: "specVersion: required" },
    quarantinedAt: "2026-11-30T10:00:01.000Z",
    quarantinedBy: "processor",
  };
};

describe("quarantine store on S3 (fauxqs, and moto under the moto project)", () => {
  it("writes one object per record under a key dated by arrival and reads it back unchanged", async () => {
    const written = await writeQuarantineRecord(s3, bucket, record(7));
    expect(written.key).toBe(
      "kinesis/tool-call-events/2026/11/30/shardId-000000000000/49590338271490256608559692538361571095921575989130000007.json",
    );
    expect(await readQuarantineRecord(s3, bucket, written.key)).toEqual(record(7));
  });

  it("never overwrites: a second write of the same record (If-None-Match: *) keeps the first object", async () => {
    const first = await writeQuarantineRecord(s3, bucket, record(8));
    const second = await writeQuarantineRecord(s3, bucket, {
      ...record(8),
      reason: { code: "bad-json", message: "written again by another attempt" },
      quarantinedAt: "2026-11-30T11:00:00.000Z",
    });
    expect([first.written, second.written]).toEqual([true, false]);
    expect(second.key).toBe(first.key);
    const listed = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: quarantineKeyFor(record(8).source) }),
    );
    expect(listed.KeyCount).toBe(1);
    expect(await readQuarantineRecord(s3, bucket, first.key)).toEqual(record(8));
  });

  it("sends every write with If-None-Match: * (what the bucket policy requires)", async () => {
    const sent: (string | undefined)[] = [];
    const watched = s3Client(emulatorClientOptions(emulator));
    watched.middlewareStack.add(
      (next) => async (args) => {
        sent.push((args.request as { headers: Record<string, string> }).headers["if-none-match"]);
        return next(args);
      },
      { step: "finalizeRequest" },
    );
    await writeQuarantineRecord(watched, bucket, record(11));
    watched.destroy();
    expect(sent).toEqual(["*"]);
  });

  it("passes its signal to S3: a write whose invocation's deadline has passed is not sent and rejects", async () => {
    const controller = new AbortController();
    controller.abort(new Error("deadline"));
    const write = writeQuarantineRecord(s3, bucket, record(10), { signal: controller.signal });
    await expect(write).rejects.toMatchObject({ name: "AbortError" });
    const listed = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: quarantineKeyFor(record(10).source) }),
    );
    expect(listed.KeyCount ?? 0).toBe(0);
  });

  it("refuses to write a record that does not match the format, before touching S3", async () => {
    const bad = { ...record(9), source: { ...record(9).source, sequenceNumber: "" } };
    const write = writeQuarantineRecord(s3, bucket, bad);
    await expect(write).rejects.toBeInstanceOf(InvalidQuarantineRecordError);
    await expect(write).rejects.toThrow(/source\.sequenceNumber/);
  });

  it.each([
    ["not JSON", "{"],
    ["another format", JSON.stringify({ formatVersion: 2 })],
  ])("reports an object that is %s with its key", async (_name, body) => {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: "kinesis/odd.json", Body: body }));
    const read = readQuarantineRecord(s3, bucket, "kinesis/odd.json");
    await expect(read).rejects.toBeInstanceOf(QuarantineFormatError);
    await expect(read).rejects.toMatchObject({ key: "kinesis/odd.json" });
  });

  it("files a record by its stream's name, and one whose source ARN names no stream under unknown-stream", () => {
    const source = record(3).source;
    expect(quarantineKeyFor(source)).toMatch(/^kinesis\/tool-call-events\/2026\/11\/30\//);
    // Nothing is lost for a malformed ARN: the record is still quarantined, under a key that says so.
    expect(quarantineKeyFor({ ...source, streamArn: "tool-call-events" })).toBe(
      `kinesis/unknown-stream/2026/11/30/${source.shardId}/${source.sequenceNumber}.json`,
    );
  });

  it("files a malformed record with what it has: stand-ins for a key, shard, stream and arrival it lacks, no invented data", () => {
    const good = kinesisRecord({ partitionKey: "p", data: {}, sequence: 4 });
    const malformed = {
      ...good,
      eventID: 42,
      eventSourceARN: undefined,
      kinesis: { sequenceNumber: good.kinesis.sequenceNumber, approximateArrivalTimestamp: "late", data: 7 },
    } as unknown as typeof good;
    expect(kinesisSourceOf(malformed, Date.UTC(2026, 11, 2))).toEqual({
      kind: "kinesis",
      streamArn: "unknown-stream",
      shardId: "unknown-shard",
      sequenceNumber: good.kinesis.sequenceNumber,
      partitionKey: UNKNOWN_PARTITION_KEY,
      approximateArrivalTimestamp: Date.UTC(2026, 11, 2) / 1000,
    });
    expect(kinesisDataOf(malformed)).toBe("");
    expect(kinesisDataOf(good)).toBe(good.kinesis.data);
  });

  it("derives the shard from eventID", () => {
    const r = kinesisRecord({ partitionKey: "p", data: {}, sequence: 1, shardId: "shardId-000000000003" });
    expect(kinesisSourceOf(r).shardId).toBe("shardId-000000000003");
  });
});
