import type { KinesisClient } from "@aws-sdk/client-kinesis";
import { DeleteObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import {
  createBucketWhenReady,
  createStreamWhenActive,
  emulatorClientOptions,
  type RunningEmulator,
  startKinesis,
  startSqsS3,
} from "@mcp-pipeline/emulators";
import { TEST_STREAM_ARN } from "@mcp-pipeline/emulators/testing";
import {
  QUARANTINE_FORMAT_VERSION,
  type QuarantineRecord,
  writeQuarantineRecord,
} from "@mcp-pipeline/recovery/quarantine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  countQuarantine,
  type JournalOutcome,
  planReplay,
  REPLAY_JOURNAL_PREFIX,
  replayQuarantine,
  type ScanOptions,
  scanQuarantine,
} from "../../src/index.js";

/**
 * The replay journal (replay-journal.ts, docs/operations.md "The replay journal"): a scan does not read
 * again an object a replay put back, and what it returns is the same as a full scan's, whatever befell the
 * journals (unreadable, never written, naming objects gone or stored again).
 */

let kinesisEmulator: RunningEmulator;
let sqsS3: RunningEmulator;
let kinesis: KinesisClient;
let s3: S3Client;
let n = 0;

beforeAll(async () => {
  [kinesisEmulator, sqsS3] = await Promise.all([startKinesis(), startSqsS3()]);
  kinesis = kinesisClient(emulatorClientOptions(kinesisEmulator));
  s3 = s3Client(emulatorClientOptions(sqsS3));
});
afterAll(async () => {
  s3?.destroy();
  kinesis?.destroy();
  await Promise.all([kinesisEmulator?.stop(), sqsS3?.stop()]);
});

async function bucketAndStream(): Promise<{ bucket: string; stream: string }> {
  n += 1;
  await createBucketWhenReady(s3, { Bucket: `journal-${n}` });
  await createStreamWhenActive(kinesis, { StreamName: `journal-target-${n}`, ShardCount: 1 });
  return { bucket: `journal-${n}`, stream: `journal-target-${n}` };
}

/** `count` records of 8 sessions, quarantined as given up (transient: a replay puts them back). */
async function quarantine(bucket: string, count: number, from = 0, reason = "RetryAttemptsExhausted") {
  const records: QuarantineRecord[] = [];
  for (let i = from; i < from + count; i += 1)
    records.push({
      formatVersion: QUARANTINE_FORMAT_VERSION,
      source: {
        kind: "kinesis",
        streamArn: TEST_STREAM_ARN,
        shardId: `shardId-00000000000${i % 2}`,
        sequenceNumber: String(49_000_000_000_000 + i),
        partitionKey: `session-${i % 8}`,
        approximateArrivalTimestamp: 1_795_996_800 + i,
      },
      data: Buffer.from(JSON.stringify({ n: i })).toString("base64"),
      reason: { code: reason, message: "given up" },
      // What dlq-redrive keeps of the on-failure record: what makes a record retryable (failure-kind.ts).
      ...(reason === "bad-json" ? {} : { failure: { condition: reason, approximateInvokeCount: 3 } }),
      quarantinedAt: new Date(1_795_996_900_000 + i).toISOString(),
      quarantinedBy: "dlq-redrive",
    });
  await Promise.all(records.map((r) => writeQuarantineRecord(s3, bucket, r)));
  // A journal stands only for objects of an earlier second than its own (S3 dates them to the second,
  // docs/aws-semantics.md §11 "Listing"): the next second begins before a replay can journal these.
  await new Promise((resolve) => setTimeout(resolve, 1_020 - (Date.now() % 1_000)));
  return records;
}

/** A client that counts the S3 commands it sends, by name. */
function countingClient(): { client: S3Client; counts: Map<string, number> } {
  const counts = new Map<string, number>();
  const client = s3Client(emulatorClientOptions(sqsS3));
  client.middlewareStack.add(
    (next, context) => (args) => {
      const name = context.commandName ?? "unknown";
      counts.set(name, (counts.get(name) ?? 0) + 1);
      return next(args);
    },
    { step: "initialize", name: "countCommands" },
  );
  return { client, counts };
}

/** Everything a caller takes from a scan, with and without the journals, on the same bucket. */
async function bothWays(bucket: string, stream: string, options: ScanOptions = {}) {
  const views = [];
  for (const fullScan of [true, false]) {
    const scan = await scanQuarantine(s3, bucket, {}, { ...options, fullScan });
    views.push({
      scan,
      view: {
        entries: scan.entries,
        unreadable: scan.unreadable,
        objects: scan.objects,
        counts: countQuarantine(scan.entries),
        plan: planReplay(scan.entries),
        summary: await replayQuarantine(s3, kinesis, bucket, scan.entries, {
          streamName: stream,
          dryRun: true,
        }),
      },
    });
  }
  return { full: views[0] as (typeof views)[0], journaled: views[1] as (typeof views)[0] };
}

describe("the replay journal", () => {
  it("a second replay reads no object a replay put back, and plans exactly as a full scan", async () => {
    const { bucket, stream } = await bucketAndStream();
    await quarantine(bucket, 120);
    const journals: JournalOutcome[] = [];
    const first = await replayQuarantine(s3, kinesis, bucket, (await scanQuarantine(s3, bucket)).entries, {
      streamName: stream,
      ratePerSecond: 50,
      onJournal: (o) => journals.push(o),
    });
    expect(first).toMatchObject({ matched: 120, replayed: 120 });
    // One journal per chunk of 50, naming every object it marked.
    expect(journals.map((j) => (j.written ? j.objects : j.error.message))).toEqual([50, 50, 20]);
    // 30 more given up since.
    await quarantine(bucket, 30, 120);

    // The second replay's reading, both ways, over the same bucket: without the journal every object is
    // read, and the tags of the 120 marked ones (their GET says they have some, x-amz-tagging-count); with
    // it, the three journals and the 30 objects none names. An object whose GET sends no tag count has no
    // tags once one tag read has shown the scan may read tags
    // (docs/aws-semantics.md §11 "Object tag count"): the 30 unmarked objects cost one tag read between
    // them, the first.
    const reads: Record<string, Record<string, number>> = {};
    for (const fullScan of [true, false]) {
      const { client, counts } = countingClient();
      const scan = await scanQuarantine(client, bucket, {}, { fullScan });
      expect(planReplay(scan.entries)).toMatchObject({ matched: 150, alreadyReplayed: 120 });
      reads[fullScan ? "full" : "journal"] = Object.fromEntries(counts);
      client.destroy();
    }
    expect(reads.full).toEqual({
      ListObjectsV2Command: 1,
      GetObjectCommand: 150,
      GetObjectTaggingCommand: 120,
    });
    expect(reads.journal).toEqual({
      ListObjectsV2Command: 2,
      GetObjectCommand: 3 + 30,
      GetObjectTaggingCommand: 1,
    });
    // The second replay itself: its reads (one tag read), then two requests per mark and one journal.
    const { client, counts } = countingClient();
    const second = await replayQuarantine(
      client,
      kinesis,
      bucket,
      (await scanQuarantine(client, bucket)).entries,
      {
        streamName: stream,
        ratePerSecond: 1_000,
      },
    );
    client.destroy();
    expect(second).toMatchObject({ matched: 150, alreadyReplayed: 120, replayed: 30 });
    expect(Object.fromEntries(counts)).toEqual({
      ListObjectsV2Command: 2,
      GetObjectCommand: 33,
      GetObjectTaggingCommand: 1 + 30,
      PutObjectTaggingCommand: 30,
      PutObjectCommand: 1,
    });
  });

  it("counts, plans and summaries are the same with and without the journal, a record given up again included", async () => {
    const { bucket, stream } = await bucketAndStream();
    const records = await quarantine(bucket, 40);
    await quarantine(bucket, 5, 40, "bad-json");
    await replayQuarantine(s3, kinesis, bucket, (await scanQuarantine(s3, bucket)).entries, {
      streamName: stream,
      ratePerSecond: 1_000,
    });
    // Record 3 failed again after its replay: the same bytes and key, stored under a new position.
    const again = records[3] as QuarantineRecord;
    await writeQuarantineRecord(s3, bucket, {
      ...again,
      source: { ...again.source, sequenceNumber: "49000000000999" },
      quarantinedAt: new Date(1_795_997_000_000).toISOString(),
    });
    const { full, journaled } = await bothWays(bucket, stream);
    expect(journaled.scan.journals).toMatchObject({ read: 1, objectsNotRead: 40, unreadable: [] });
    expect(full.scan.journals).toEqual({ read: 0, objectsNotRead: 0, unreadable: [] });
    expect(journaled.view).toEqual(full.view);
    expect(journaled.view.summary).toMatchObject({
      matched: 45,
      alreadyReplayed: 39,
      toReplay: 1,
      givenUpAgain: 1,
    });
    // Put back with the bytes of its first object, which only the journal holds here.
    expect(journaled.view.plan.items[0]?.entry.record.data).toBe(again.data);
  });

  it("a journal that cannot be read or checked is reported and ignored: the objects it names are read in full", async () => {
    const { bucket, stream } = await bucketAndStream();
    await quarantine(bucket, 10);
    const journals: JournalOutcome[] = [];
    await replayQuarantine(s3, kinesis, bucket, (await scanQuarantine(s3, bucket)).entries, {
      streamName: stream,
      onJournal: (o) => journals.push(o),
    });
    const full = await scanQuarantine(s3, bucket, {}, { fullScan: true });
    expect((await scanQuarantine(s3, bucket)).journals).toMatchObject({ read: 1, objectsNotRead: 10 });
    // The good journal replaced by broken ones: not JSON, and one whose record the format refuses.
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: journals[0]?.key }));
    const entry = full.entries[0];
    const badRecord = {
      formatVersion: 1,
      kind: "replay-journal",
      writtenAt: new Date().toISOString(),
      streamName: stream,
      objects: [
        {
          key: entry?.key,
          replayedAt: new Date().toISOString(),
          replaySequenceNumber: "1",
          record: { ...entry?.record, data: 42 },
        },
      ],
    };
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: `${REPLAY_JOURNAL_PREFIX}broken.json`, Body: "{not json" }),
    );
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: `${REPLAY_JOURNAL_PREFIX}bad-record.json`,
        Body: JSON.stringify(badRecord),
      }),
    );
    const after = await scanQuarantine(s3, bucket);
    expect(after.journals.unreadable.map((u) => [u.key, u.error.name])).toEqual([
      [`${REPLAY_JOURNAL_PREFIX}bad-record.json`, "ReplayJournalFormatError"],
      [`${REPLAY_JOURNAL_PREFIX}broken.json`, "ReplayJournalFormatError"],
    ]);
    expect(after.journals.unreadable[0]?.error.message).toMatch(/objects\.0\.record: data/);
    expect(after.journals).toMatchObject({ read: 0, objectsNotRead: 0 });
    expect(after.entries).toEqual(full.entries);
    expect(after.unreadable).toEqual([]);
  });

  it("a replay that stops between its marks and its journal leaves objects that are read in full, and marked", async () => {
    const { bucket, stream } = await bucketAndStream();
    await quarantine(bucket, 20);
    // S3 refuses the journal's write (as a role without s3:PutObject on replays/ would).
    const refusing = s3Client({ ...emulatorClientOptions(sqsS3), maxAttempts: 1 });
    refusing.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === "PutObjectCommand")
          throw Object.assign(new Error("Access Denied"), {
            name: "AccessDenied",
            $metadata: { httpStatusCode: 403 },
          });
        return next(args);
      },
      { step: "initialize", name: "refuseJournal" },
    );
    const journals: JournalOutcome[] = [];
    const summary = await replayQuarantine(
      refusing,
      kinesis,
      bucket,
      (await scanQuarantine(s3, bucket)).entries,
      {
        streamName: stream,
        onJournal: (o) => journals.push(o),
      },
    );
    refusing.destroy();
    // The replay is not failed by it: every record is back and marked.
    expect(summary).toMatchObject({ replayed: 20 });
    expect(journals).toMatchObject([{ written: false, error: { name: "AccessDenied" } }]);
    const { full, journaled } = await bothWays(bucket, stream);
    expect(journaled.scan.journals).toEqual({ read: 0, objectsNotRead: 0, unreadable: [] });
    expect(journaled.view).toEqual(full.view);
    expect(journaled.view.summary).toMatchObject({ matched: 20, alreadyReplayed: 20, toReplay: 0 });
  });

  it("keys a journal names that are gone are ignored; one stored again after the journal is read in full", async () => {
    const { bucket, stream } = await bucketAndStream();
    const records = await quarantine(bucket, 6);
    await replayQuarantine(s3, kinesis, bucket, (await scanQuarantine(s3, bucket)).entries, {
      streamName: stream,
    });
    const keys = (await scanQuarantine(s3, bucket, {}, { fullScan: true })).entries.map((e) => e.key);
    // Two expired (the lifecycle rule of replayed objects); one of them stored again since, unmarked.
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: keys[0] }));
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: keys[1] }));
    const storedAgain = records.find((r) => keys[1]?.endsWith(`/${r.source.sequenceNumber}.json`));
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await writeQuarantineRecord(s3, bucket, storedAgain as QuarantineRecord);
    const { full, journaled } = await bothWays(bucket, stream);
    expect(journaled.scan.journals).toMatchObject({ read: 1, objectsNotRead: 4, unreadable: [] });
    expect(journaled.view).toEqual(full.view);
    expect(journaled.view.summary).toMatchObject({ matched: 5, alreadyReplayed: 4, toReplay: 1 });
    expect(journaled.view.plan.items.map((i) => i.entry.key)).toEqual([keys[1]]);
  });
});
