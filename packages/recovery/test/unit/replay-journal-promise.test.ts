import { type KinesisClient, PutRecordsCommand } from "@aws-sdk/client-kinesis";
import {
  GetObjectCommand,
  GetObjectTaggingCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  PutObjectTaggingCommand,
  type S3Client,
  type Tag,
} from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import {
  countQuarantine,
  JOURNAL_MAX_BYTES,
  planReplay,
  type QuarantineScan,
  REPLAY_JOURNAL_PREFIX,
  replayedAt,
  replayQuarantine,
  scanQuarantine,
} from "../../src/index.js";

/**
 * What the replay journal promises (docs/operations.md "The replay journal"): a scan with the journals finds
 * what a full scan finds, whatever befell the objects since the journal. Unit tests (the review ran no
 * emulator): S3 and Kinesis are a small in-memory double that answers as the services do where it matters
 * here: ListObjectsV2 dates each object to the second (S3's `LastModified`), a tag change does not
 * change it, a PutObject with If-None-Match: * of an existing key is refused.
 */

interface Version {
  readonly body: string;
  readonly storedAt: number;
  tags: Tag[];
}

class S3Error extends Error {
  readonly $metadata: { httpStatusCode: number };
  constructor(name: string, status: number) {
    super(name);
    this.name = name;
    this.$metadata = { httpStatusCode: status };
  }
}

/** One bucket: current versions by key, a clock the test moves, and who may list what. */
class FakeS3 {
  readonly objects = new Map<string, Version>();
  now = Date.parse("2026-12-07T10:00:00.000Z");
  /** Prefixes whose listing the caller's role is refused (AccessDenied), as a ListBucket with s3:prefix. */
  readonly listRefused = new Set<string>();
  readonly puts: { key: string; bytes: number }[] = [];
  /** GetObject and GetObjectTagging of objects under kinesis/: what the journal saves. */
  recordReads = 0;
  /** Runs once before the next journal's PutObject is stored: a slow journal write. */
  beforeJournal: (() => Promise<void>) | undefined;
  /**
   * The caller's role lacks s3:GetObjectTagging: S3 refuses GetObjectTagging (AccessDenied) and its GetObject
   * answers without x-amz-tagging-count, tags or not (docs/aws-semantics.md §11 "Object tag count").
   */
  tagReadRefused = false;
  /** The commands answered, by name. */
  readonly calls = new Map<string, number>();

  put(key: string, body: string): void {
    this.objects.set(key, { body, storedAt: this.now, tags: [] });
  }

  delete(key: string): void {
    this.objects.delete(key);
  }

  // biome-ignore lint/suspicious/noExplicitAny: the double answers the SDK's commands by their class.
  async send(command: any): Promise<any> {
    const input = command.input;
    this.calls.set(command.constructor.name, (this.calls.get(command.constructor.name) ?? 0) + 1);
    if (command instanceof ListObjectsV2Command) {
      if (this.listRefused.has(input.Prefix)) throw new S3Error("AccessDenied", 403);
      const keys = [...this.objects.keys()].filter((k) => k.startsWith(input.Prefix ?? "")).sort();
      return {
        // S3 dates a listed object to the second (LastModified ends in .000Z).
        Contents: keys.map((Key) => ({
          Key,
          LastModified: new Date(Math.floor((this.objects.get(Key) as Version).storedAt / 1000) * 1000),
        })),
      };
    }
    const object = this.objects.get(input.Key);
    if (
      (command instanceof GetObjectCommand || command instanceof GetObjectTaggingCommand) &&
      String(input.Key).startsWith("kinesis/")
    )
      this.recordReads += 1;
    if (command instanceof GetObjectCommand) {
      if (object === undefined) throw new S3Error("NoSuchKey", 404);
      const bytes = new TextEncoder().encode(object.body);
      // S3 sends x-amz-tagging-count only for an object that has tags, to a caller that may read them.
      const tagCount = this.tagReadRefused ? undefined : object.tags.length || undefined;
      return { Body: { transformToByteArray: async () => bytes }, TagCount: tagCount };
    }
    if (command instanceof GetObjectTaggingCommand) {
      if (this.tagReadRefused) throw new S3Error("AccessDenied", 403);
      if (object === undefined) throw new S3Error("NoSuchKey", 404);
      return { TagSet: object.tags.map((t) => ({ ...t })) };
    }
    if (command instanceof PutObjectTaggingCommand) {
      if (object === undefined) throw new S3Error("NoSuchKey", 404);
      object.tags = input.Tagging.TagSet.map((t: Tag) => ({ ...t }));
      return {};
    }
    if (command instanceof PutObjectCommand) {
      const hook = String(input.Key).startsWith("replays/") ? this.beforeJournal : undefined;
      if (hook !== undefined) {
        this.beforeJournal = undefined;
        await hook();
      }
      if (input.IfNoneMatch === "*" && this.objects.has(input.Key))
        throw new S3Error("PreconditionFailed", 412);
      const body = String(input.Body);
      this.puts.push({ key: input.Key, bytes: Buffer.byteLength(body) });
      this.put(input.Key, body);
      return {};
    }
    throw new Error(`the double does not answer ${command.constructor.name}`);
  }
}

/** A stream that takes every record: sequence numbers in order. */
class FakeKinesis {
  sequence = 49_600_000_000_000_000n;
  // biome-ignore lint/suspicious/noExplicitAny: the double answers the SDK's commands by their class.
  async send(command: any): Promise<any> {
    if (!(command instanceof PutRecordsCommand)) throw new Error(`unexpected ${command.constructor.name}`);
    return {
      FailedRecordCount: 0,
      Records: (command.input.Records ?? []).map(() => {
        this.sequence += 1n;
        return { SequenceNumber: String(this.sequence), ShardId: "shardId-000000000000" };
      }),
    };
  }
}

const STREAM_ARN = "arn:aws:kinesis:us-east-1:123456789012:stream/tool-call-events";

function record(i: number, data = Buffer.from(JSON.stringify({ n: i })).toString("base64")) {
  return {
    formatVersion: 1,
    source: {
      kind: "kinesis",
      streamArn: STREAM_ARN,
      shardId: "shardId-000000000000",
      sequenceNumber: String(49_000_000_000_000 + i),
      partitionKey: `session-${i % 4}`,
      approximateArrivalTimestamp: 1_796_032_800 + i,
    },
    data,
    reason: { code: "RetryAttemptsExhausted", message: "given up" },
    failure: { condition: "RetryAttemptsExhausted", approximateInvokeCount: 3 },
    quarantinedAt: new Date(1_796_032_900_000 + i).toISOString(),
    quarantinedBy: "dlq-redrive",
  };
}

const keyOf = (i: number) =>
  `kinesis/tool-call-events/2026/12/01/shardId-000000000000/${49_000_000_000_000 + i}.json`;

const BUCKET = "quarantine";

function quarantine(s3: FakeS3, from: number, count: number, data?: (i: number) => string): void {
  for (let i = from; i < from + count; i += 1)
    s3.put(keyOf(i), JSON.stringify(record(i, data?.(i) ?? Buffer.from(`{"n":${i}}`).toString("base64"))));
}

async function replayAll(
  s3: FakeS3,
  kinesis: FakeKinesis,
  options: { ratePerSecond?: number; scan?: QuarantineScan } = {},
) {
  const client = s3 as unknown as S3Client;
  const scan = options.scan ?? (await scanQuarantine(client, BUCKET));
  return replayQuarantine(client, kinesis as unknown as KinesisClient, BUCKET, scan.entries, {
    streamName: "tool-call-events",
    ratePerSecond: options.ratePerSecond ?? 500,
    now: () => s3.now,
    sleep: async () => {},
  });
}

/** What a person sees of a scan: its entries as `inspect --list` shows them, its counts, its plan. */
function seen(scan: QuarantineScan) {
  const plan = planReplay(scan.entries);
  return {
    entries: scan.entries.map((e) => ({
      key: e.key,
      data: e.record.data,
      replayedAt: e.replayedAt,
      sameAs: e.sameAs,
    })),
    counts: countQuarantine(scan.entries),
    plan: {
      matched: plan.matched,
      alreadyReplayed: plan.alreadyReplayed,
      items: plan.items.map((i) => ({
        key: i.entry.key,
        unmarked: i.unmarked,
        givenUpAgain: i.givenUpAgain,
      })),
    },
  };
}

async function bothScans(s3: FakeS3) {
  const client = s3 as unknown as S3Client;
  const journaled = await scanQuarantine(client, BUCKET);
  const full = await scanQuarantine(client, BUCKET, {}, { fullScan: true });
  return { journaled, full };
}

describe("the replay journal keeps its promise", () => {
  it("(the double's own check) after a replay and a failure again, a scan finds what a full scan finds, reading less", async () => {
    const s3 = new FakeS3();
    const kinesis = new FakeKinesis();
    quarantine(s3, 0, 6);
    s3.now += 60_000;
    await replayAll(s3, kinesis);
    // Record 3 fails again after its replay: the same bytes under a new sequence number.
    s3.now += 60_000;
    s3.put(
      keyOf(100),
      JSON.stringify({
        ...record(100, record(3).data),
        source: { ...record(100).source, partitionKey: "session-3" },
      }),
    );
    s3.recordReads = 0;
    const journaled = await scanQuarantine(s3 as unknown as S3Client, BUCKET);
    const readWithJournals = s3.recordReads;
    const full = await scanQuarantine(s3 as unknown as S3Client, BUCKET, {}, { fullScan: true });
    expect(journaled.journals).toMatchObject({ read: 1, objectsNotRead: 6, unreadable: [] });
    // Only the object no journal names: its GET, and its tags (the double, like S3, sends no tag count for
    // an object without tags).
    expect(readWithJournals).toBe(2);
    expect(seen(journaled)).toEqual(seen(full));
    expect(seen(journaled).plan.items).toEqual([
      { key: keyOf(3), unmarked: [keyOf(100)], givenUpAgain: true },
    ]);
    const client = s3 as unknown as S3Client;
    for (const filter of [
      { session: "session-3" },
      { since: (1_796_032_800 + 4) * 1000 },
      { reason: "RetryAttemptsExhausted" },
    ])
      expect(seen(await scanQuarantine(client, BUCKET, filter))).toEqual(
        seen(await scanQuarantine(client, BUCKET, filter, { fullScan: true })),
      );
  });

  it("a scan reads an object stored again at a journaled key within the journal's second", async () => {
    const s3 = new FakeS3();
    const kinesis = new FakeKinesis();
    quarantine(s3, 0, 3);
    s3.now += 5_000;
    // The replay marks and journals at 10:00:05.100.
    s3.now += 100;
    await replayAll(s3, kinesis);
    expect([...s3.objects.keys()].filter((k) => k.startsWith(REPLAY_JOURNAL_PREFIX))).toHaveLength(1);
    // Record 1's object goes (the lifecycle, or the break-glass role) and the same key is written again,
    // by a later failure of that very Kinesis record, 500 ms after the journal: a new object, not marked.
    s3.delete(keyOf(1));
    s3.now += 500;
    s3.put(keyOf(1), JSON.stringify({ ...record(1), reason: { code: "FunctionError", message: "again" } }));
    const { journaled, full } = await bothScans(s3);
    expect(full.entries.find((e) => e.key === keyOf(1))?.replayedAt).toBeUndefined();
    expect(seen(journaled)).toEqual(seen(full));
  });

  it("a replayed tag taken off by hand after its journal is seen by show and a full scan, as documented", async () => {
    const s3 = new FakeS3();
    const kinesis = new FakeKinesis();
    quarantine(s3, 0, 3);
    s3.now += 60_000;
    await replayAll(s3, kinesis);
    // A person takes the mark off (docs/operations.md: a `replayed-at` without `replayed=true` is no mark,
    // and the record waits); `show` and the tags say it waits.
    const object = s3.objects.get(keyOf(2)) as Version;
    object.tags = object.tags.map((t) => (t.Key === "replayed" ? { Key: "replayed", Value: "false" } : t));
    const client = s3 as unknown as S3Client;
    expect(await replayedAt(client, BUCKET, keyOf(2))).toBeUndefined();
    const { journaled, full } = await bothScans(s3);
    expect(full.entries.find((e) => e.key === keyOf(2))?.replayedAt).toBeUndefined();
    expect(seen(full).plan.items).toEqual([{ key: keyOf(2), unmarked: [keyOf(2)], givenUpAgain: false }]);
    // docs/operations.md "The replay journal": a tag change leaves nothing a listing shows (§11 "Listing"), so
    // a scan that uses the journals still takes the journal's mark; only a full scan reads the tags.
    expect(journaled.entries.find((e) => e.key === keyOf(2))?.replayedAt).toBeDefined();
    expect(seen(journaled).plan.items).toEqual([]);
    // The full scan's replay puts it back and marks it again; from then on both scans agree.
    s3.now += 60_000;
    expect(await replayAll(s3, kinesis, { scan: full })).toMatchObject({ replayed: 1 });
    const after = await bothScans(s3);
    expect(seen(after.journaled)).toEqual(seen(after.full));
    expect(seen(after.full).plan.items).toEqual([]);
  });

  it("two replays at once: a scan shows the mark the object's tags hold, not the later journal's", async () => {
    const s3 = new FakeS3();
    const kinesis = new FakeKinesis();
    quarantine(s3, 0, 2);
    const client = s3 as unknown as S3Client;
    // An operator's CLI replay (A) and a dlq-redrive replay (B) scan the same quarantine.
    const scanA = await scanQuarantine(client, BUCKET);
    const scanB = await scanQuarantine(client, BUCKET);
    s3.now = Date.parse("2026-12-07T10:01:00.000Z");
    // A marks its objects at 10:01:00; its journal's PutObject is slow (the SDK's retries): meanwhile B puts
    // the same records back, marks them at 10:02:00 (the tags now say 10:02:00) and stores its journal.
    s3.beforeJournal = async () => {
      s3.now = Date.parse("2026-12-07T10:02:00.000Z");
      await replayAll(s3, kinesis, { scan: scanB });
      s3.now = Date.parse("2026-12-07T10:03:00.000Z");
    };
    await replayAll(s3, kinesis, { scan: scanA });
    expect([...s3.objects.keys()].filter((k) => k.startsWith(REPLAY_JOURNAL_PREFIX))).toHaveLength(2);
    const { journaled, full } = await bothScans(s3);
    expect(full.entries.map((e) => e.replayedAt)).toEqual([
      "2026-12-07T10:02:00.000Z",
      "2026-12-07T10:02:00.000Z",
    ]);
    expect(seen(journaled)).toEqual(seen(full));
  });

  it("a scan whose role may not list replays/ reads every object, the journals reported", async () => {
    const s3 = new FakeS3();
    const kinesis = new FakeKinesis();
    quarantine(s3, 0, 3);
    s3.now += 60_000;
    await replayAll(s3, kinesis);
    quarantine(s3, 10, 2);
    // An operator's role whose s3:ListBucket is held to s3:prefix kinesis/ (what the scan needed before).
    s3.listRefused.add(REPLAY_JOURNAL_PREFIX);
    const client = s3 as unknown as S3Client;
    const full = await scanQuarantine(client, BUCKET, {}, { fullScan: true });
    const journaled = await scanQuarantine(client, BUCKET).catch((error: Error) => error);
    expect(journaled).not.toBeInstanceOf(Error);
    expect(seen(journaled as QuarantineScan)).toEqual(seen(full));
    expect((journaled as QuarantineScan).journals).toMatchObject({
      read: 0,
      objectsNotRead: 0,
      unreadable: [{ key: REPLAY_JOURNAL_PREFIX, error: { name: "AccessDenied" } }],
    });
  });

  it("a replay chunk of large records is journaled in objects of at most JOURNAL_MAX_BYTES, every record named", async () => {
    const s3 = new FakeS3();
    const kinesis = new FakeKinesis();
    // 20 records of 600 KiB each, within Kinesis's 1 MiB a record: 12 MiB, three PutRecords requests.
    const big = Buffer.alloc(600 * 1024, 7).toString("base64");
    quarantine(s3, 0, 20, () => big);
    s3.now += 60_000;
    await replayAll(s3, kinesis, { ratePerSecond: 20 });
    const journals = s3.puts.filter((p) => p.key.startsWith(REPLAY_JOURNAL_PREFIX));
    expect(journals.length).toBeGreaterThan(0);
    // replay-journal.ts: a chunk's journal is as many objects as it takes for each to stay under
    // JOURNAL_MAX_BYTES (2 MiB), well under the 7 MiB the review asked of it.
    for (const journal of journals) expect(journal.bytes).toBeLessThanOrEqual(JOURNAL_MAX_BYTES);
    // Together they stand for every record: the next scan reads none of them again.
    s3.recordReads = 0;
    const scan = await scanQuarantine(s3 as unknown as S3Client, BUCKET);
    expect(scan.journals).toMatchObject({ read: journals.length, objectsNotRead: 20, unreadable: [] });
    expect(s3.recordReads).toBe(0);
  });
});

describe('a scan\'s tag reads (docs/aws-semantics.md §11 "Object tag count")', () => {
  const client = (s3: FakeS3) => s3 as unknown as S3Client;

  it("a full scan of untagged objects costs one GET each and at most one GetObjectTagging", async () => {
    const s3 = new FakeS3();
    quarantine(s3, 0, 40);
    const scan = await scanQuarantine(client(s3), BUCKET, {}, { fullScan: true });
    expect(scan.entries).toHaveLength(40);
    expect(scan.unreadable).toEqual([]);
    expect(scan.entries.every((e) => e.replayedAt === undefined)).toBe(true);
    expect(s3.calls.get("GetObjectCommand")).toBe(40);
    // The one tag read proves the caller may read tags: from then on a GET without a tag count is an
    // object without tags. The 15 GETs in flight with it wait for it rather than ask too.
    expect(s3.calls.get("GetObjectTaggingCommand")).toBe(1);
  });

  it("a tagged object is still read as replayed, among untagged ones read before and after it", async () => {
    const s3 = new FakeS3();
    const kinesis = new FakeKinesis();
    quarantine(s3, 10, 40);
    s3.now += 60_000;
    expect(await replayAll(s3, kinesis)).toMatchObject({ replayed: 40 });
    // Ten records given up since, listed before the replayed ones: the scan's first GETs are of these.
    quarantine(s3, 0, 10);
    quarantine(s3, 50, 10);
    s3.calls.clear();
    const scan = await scanQuarantine(client(s3), BUCKET, {}, { fullScan: true });
    const replayed = (i: number) => scan.entries.find((e) => e.key === keyOf(i))?.replayedAt;
    for (let i = 0; i < 60; i += 1) expect(replayed(i) !== undefined, `object ${i}`).toBe(i >= 10 && i < 50);
    expect(planReplay(scan.entries)).toMatchObject({ matched: 60, alreadyReplayed: 40 });
    // The 40 tagged objects' tags (their GET says they have some), and at most one more for the proof.
    expect(s3.calls.get("GetObjectCommand")).toBe(60);
    expect(s3.calls.get("GetObjectTaggingCommand")).toBeGreaterThanOrEqual(40);
    expect(s3.calls.get("GetObjectTaggingCommand")).toBeLessThanOrEqual(41);
  });

  it("a caller refused GetObjectTagging gets what it got before: each object unreadable (AccessDenied), none shown as waiting", async () => {
    const s3 = new FakeS3();
    const kinesis = new FakeKinesis();
    quarantine(s3, 0, 5);
    s3.now += 60_000;
    await replayAll(s3, kinesis);
    quarantine(s3, 5, 3);
    s3.calls.clear();
    // Its GETs say nothing of the tags, the replayed objects' included: read as untagged, these would be
    // shown as waiting and put back again.
    s3.tagReadRefused = true;
    const scan = await scanQuarantine(client(s3), BUCKET, {}, { fullScan: true });
    expect(scan.entries).toEqual([]);
    expect(scan.unreadable).toEqual(
      Array.from({ length: 8 }, (_, i) => ({
        key: keyOf(i),
        error: { name: "AccessDenied", message: "AccessDenied" },
      })),
    );
    // One tag read an object, as before: no object is taken for untagged on a refusal.
    expect(s3.calls.get("GetObjectCommand")).toBe(8);
    expect(s3.calls.get("GetObjectTaggingCommand")).toBe(8);
  });
});
