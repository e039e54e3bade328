import { createHash } from "node:crypto";
import {
  GetObjectTaggingCommand,
  ListObjectsV2Command,
  PutObjectTaggingCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { compareSequenceNumbers } from "@mcp-pipeline/aws";
import {
  QuarantineFormatError,
  type QuarantineRecord,
  readQuarantineObject,
} from "@mcp-pipeline/recovery/quarantine";
import { forEachBounded } from "./bounded.js";
import { type FailureKind, quarantineFailureKind } from "./failure-kind.js";
import { throwIfInterrupted } from "./interrupted.js";
import {
  JOURNAL_READ_CONCURRENCY,
  journalCoverage,
  listObjects,
  readReplayJournals,
} from "./replay-journal.js";

/** Which quarantined records an operation applies to; every field narrows. */
export interface QuarantineFilter {
  readonly reason?: string;
  /** Arrival at or after this instant (ms). */
  readonly since?: number;
  /** Arrival before this instant (ms). */
  readonly until?: number;
  /** The partition key, i.e. the session. */
  readonly session?: string;
  readonly shardId?: string;
}

/** One object of the bucket that holds a record, and whether a replay put that object's record back. */
export interface QuarantineObjectState {
  readonly key: string;
  /** The reason this object was stored for (a record replayed and given up again has two objects). */
  readonly reason: string;
  readonly kind: FailureKind;
  readonly quarantinedAt: string;
  /** When a replay put the record back, from this object (metadata `replayed-at`); absent if never. */
  readonly replayedAt?: string;
}

export interface QuarantineEntry {
  readonly key: string;
  readonly record: QuarantineRecord;
  /** `recordDigest` of the record: equal digests are the same record. */
  readonly digest: string;
  /** Whether putting it back can help (failure-kind.ts). */
  readonly kind: FailureKind;
  /** When a replay put this object's record back; absent if never. */
  readonly replayedAt?: string;
  /**
   * Other objects of the bucket that hold the same record (same partition key and bytes), whatever
   * the filter: a copy quarantined again after a replay (the replay puts the same bytes back and the
   * processor or dlq-redrive stores them under their new sequence number), or a producer's duplicate send.
   */
  readonly sameAs: readonly string[];
  /** Every object that holds the record, this one included, oldest first: the record's history. */
  readonly objects: readonly QuarantineObjectState[];
}

/**
 * What makes a quarantined record the same record: its partition key and its bytes. A replay puts
 * back exactly these, so a record that is quarantined again after a replay has the same digest as
 * the object it came from, under a new key (a new sequence number).
 */
export function recordDigest(record: Pick<QuarantineRecord, "source" | "data">): string {
  return createHash("sha256")
    .update(record.source.partitionKey)
    .update("\n")
    .update(record.data)
    .digest("hex");
}

/**
 * Tags set on a quarantine object once its record is back in the stream. Tags, not metadata: changing
 * metadata rewrites the object (a copy onto itself), which the quarantine's conditional writes and bucket
 * policy refuse (terraform/modules/bucket), and a lifecycle rule can select by tag, so that only replayed
 * records can be set to expire (`REPLAYED` = `true`). Objects marked before by metadata read as not
 * replayed: a replay puts such a record back once more, which changes nothing (docs/idempotency.md), and
 * tags it.
 */
export const REPLAYED = "replayed";
export const REPLAYED_AT = "replayed-at";
export const REPLAY_SEQUENCE = "replay-sequence-number";

export function matches(record: QuarantineRecord, filter: QuarantineFilter): boolean {
  const arrival = record.source.approximateArrivalTimestamp * 1000;
  return (
    (filter.reason === undefined || record.reason.code === filter.reason) &&
    (filter.since === undefined || arrival >= filter.since) &&
    (filter.until === undefined || arrival < filter.until) &&
    (filter.session === undefined || record.source.partitionKey === filter.session) &&
    (filter.shardId === undefined || record.source.shardId === filter.shardId)
  );
}

/** An object under `kinesis/` that is not a quarantine record this code can read: left as it is, reported. */
export interface UnreadableObject {
  readonly key: string;
  /** The error's name (QuarantineFormatError, NoSuchKey, AccessDenied...) and message. */
  readonly error: { readonly name: string; readonly message: string };
}

export interface QuarantineScan {
  /** The records that match, in shard then sequence order. */
  readonly entries: QuarantineEntry[];
  /** Objects that could not be read as quarantine records: skipped, never the end of the listing. */
  readonly unreadable: UnreadableObject[];
  /** Objects listed under `kinesis/`, readable or not, matching or not. */
  readonly objects: number;
  /** What the replay journals saved (replay-journal.ts); all zero and empty for a full scan. */
  readonly journals: JournalUse;
}

export interface JournalUse {
  /** Journals read under `replays/`. */
  readonly read: number;
  /** Objects under `kinesis/` a journal stood for: not read again. */
  readonly objectsNotRead: number;
  /** Journals that could not be read or checked: ignored, the objects they name read in full. */
  readonly unreadable: UnreadableObject[];
}

export interface ScanOptions {
  /**
   * GETs in flight at once (default 16): a bucket of 10,000 objects is read in seconds, not minutes. Replay
   * journals, each up to JOURNAL_MAX_BYTES, are read at most JOURNAL_READ_CONCURRENCY at once.
   */
  readonly concurrency?: number;
  /** The account that must own the bucket: S3 answers 403 for a bucket of another account. */
  readonly expectedBucketOwner?: string;
  /**
   * An abort stops the scan before its next LIST or GET (those in flight settle) with an InterruptedError:
   * a scan holds nothing, so a person's Ctrl-C need not wait for a bucket of 50,000 objects.
   */
  readonly signal?: AbortSignal;
  /**
   * Read every object again, journals or not (replay-journal.ts): for a person who changed a mark by hand
   * (a `replayed` tag taken off to put a record back once more), which the journals do not know of.
   */
  readonly fullScan?: boolean;
}

/**
 * An object's own problem (its bytes, its key gone, a key it may not read): it is reported and the
 * listing goes on. Anything else (throttling, 5xx, the network) is the listing's: it stops, and a run
 * again can do better.
 */
function unreadable(error: unknown): boolean {
  if (error instanceof QuarantineFormatError) return true;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status !== undefined && status >= 400 && status < 500 && status !== 429;
}

/**
 * An object's replay mark, given the tag count its GET answered, asking for its tags only where that count
 * may not be trusted. S3 sends `x-amz-tagging-count` only for an object that has tags, and only to a caller
 * that may read them (docs/aws-semantics.md §11 "Object tag count"): an absent count is "no tags" for a
 * caller known to be allowed s3:GetObjectTagging, and says nothing for one that is not, whose replayed
 * objects would read as never replayed and be put back again. So the first tag read is the proof: until one
 * succeeds, each object's tags are asked for (the reads in flight meanwhile wait for the first one rather
 * than ask too); after, an object without a count costs no second request. A refused tag read proves
 * nothing: the object is reported as before (AccessDenied) and the next object asks for its own tags.
 */
function replayMarkReader(
  readMark: (key: string) => Promise<string | undefined>,
): (key: string, tagCount: number | undefined) => Promise<string | undefined> {
  let mayReadTags = false;
  /** The first tag read, while it is in flight; absent once it settled. */
  let proving: Promise<unknown> | undefined;
  let tried = false;
  return async (key, tagCount) => {
    // A count of 0, from an endpoint that sends one, is no tags whoever asks.
    if (tagCount === 0) return undefined;
    if (tagCount === undefined) {
      if (proving !== undefined) await proving;
      if (mayReadTags) return undefined;
    }
    const read = readMark(key);
    if (!tried) {
      tried = true;
      // Its failure is this object's (thrown below), not the waiters'.
      proving = read
        .catch(() => undefined)
        .finally(() => {
          proving = undefined;
        });
    }
    const mark = await read;
    mayReadTags = true;
    return mark;
  };
}

/**
 * Reads every quarantine object under `kinesis/` (one GET each, and its tags when it has some), and returns
 * those that match with, for each, every object that holds the same record. An object that cannot be
 * read as a quarantine record is reported in `unreadable` and skipped. An object a replay journal names is
 * not read: the journal holds its record and mark (replay-journal.ts), unless `fullScan` asks.
 */
export async function scanQuarantine(
  s3: S3Client,
  bucket: string,
  filter: QuarantineFilter = {},
  options: ScanOptions = {},
): Promise<QuarantineScan> {
  const concurrency = options.concurrency ?? 16;
  const listed = await listObjects(s3, bucket, "kinesis/", options);
  const badJournals: UnreadableObject[] = [];
  const journals = options.fullScan
    ? []
    : await readReplayJournals(s3, bucket, {
        concurrency: Math.min(concurrency, JOURNAL_READ_CONCURRENCY),
        ...(options.expectedBucketOwner ? { expectedBucketOwner: options.expectedBucketOwner } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        isUnreadable: unreadable,
        onUnreadable: (key, error) =>
          badJournals.push({ key, error: { name: error.name, message: error.message } }),
      });
  const covered = journalCoverage(listed, journals);
  const read: ({ key: string; record: QuarantineRecord; digest: string; replayedAt?: string } | undefined)[] =
    new Array(listed.length);
  const failed: UnreadableObject[] = [];
  const owner = options.expectedBucketOwner ? { expectedBucketOwner: options.expectedBucketOwner } : {};
  const marks = replayMarkReader((key) => replayedAt(s3, bucket, key, owner));
  await forEachBounded(listed, concurrency, async ({ key }, index) => {
    const journaled = covered.get(key);
    if (journaled !== undefined) {
      read[index] = {
        key,
        record: journaled.record,
        digest: recordDigest(journaled.record),
        replayedAt: journaled.replayedAt,
      };
      return;
    }
    throwIfInterrupted(options.signal);
    try {
      const { record, tagCount } = await readQuarantineObject(s3, bucket, key, owner);
      const mark = await marks(key, tagCount);
      read[index] = { key, record, digest: recordDigest(record), ...(mark ? { replayedAt: mark } : {}) };
    } catch (error) {
      if (!unreadable(error)) throw error;
      failed.push({ key, error: { name: (error as Error).name, message: (error as Error).message } });
    }
  });
  const all = read.filter((r) => r !== undefined);
  const byDigest = new Map<string, QuarantineObjectState[]>();
  for (const { key, record, digest, replayedAt } of all) {
    const state: QuarantineObjectState = {
      key,
      reason: record.reason.code,
      kind: quarantineFailureKind(record),
      quarantinedAt: record.quarantinedAt,
      ...(replayedAt ? { replayedAt } : {}),
    };
    byDigest.set(digest, [...(byDigest.get(digest) ?? []), state]);
  }
  for (const states of byDigest.values())
    states.sort((a, b) => a.quarantinedAt.localeCompare(b.quarantinedAt) || a.key.localeCompare(b.key));
  const entries: QuarantineEntry[] = all
    .filter((e) => matches(e.record, filter))
    .map((e) => {
      const objects = byDigest.get(e.digest) ?? [];
      return {
        ...e,
        kind: quarantineFailureKind(e.record),
        sameAs: objects.map((o) => o.key).filter((k) => k !== e.key),
        objects,
      };
    });
  entries.sort(
    (a, b) =>
      a.record.source.shardId.localeCompare(b.record.source.shardId) ||
      compareSequenceNumbers(a.record.source.sequenceNumber, b.record.source.sequenceNumber),
  );
  return {
    entries,
    unreadable: failed.sort((a, b) => a.key.localeCompare(b.key)),
    objects: listed.length,
    journals: {
      read: journals.length,
      objectsNotRead: covered.size,
      unreadable: badJournals.sort((a, b) => a.key.localeCompare(b.key)),
    },
  };
}

/**
 * Every quarantined record under `kinesis/` that matches, in shard then sequence order (scanQuarantine's
 * entries). Objects that cannot be read are skipped; `onUnreadable` hears of each.
 */
export async function listQuarantine(
  s3: S3Client,
  bucket: string,
  filter: QuarantineFilter = {},
  options: ScanOptions & {
    readonly onUnreadable?: (object: UnreadableObject) => void;
    /** A replay journal that could not be used: ignored, the objects it names read in full. */
    readonly onUnreadableJournal?: (object: UnreadableObject) => void;
  } = {},
): Promise<QuarantineEntry[]> {
  const scan = await scanQuarantine(s3, bucket, filter, options);
  for (const object of scan.unreadable) options.onUnreadable?.(object);
  for (const object of scan.journals.unreadable) options.onUnreadableJournal?.(object);
  return scan.entries;
}

/**
 * When the object's record was put back in the stream (its `replayed-at` tag), if it was: the replay mark
 * of one object (`show` of a single key, and each object a scan reads).
 */
export async function replayedAt(
  s3: S3Client,
  bucket: string,
  key: string,
  options: { readonly expectedBucketOwner?: string } = {},
): Promise<string | undefined> {
  const { TagSet = [] } = await s3.send(
    new GetObjectTaggingCommand({
      Bucket: bucket,
      Key: key,
      ...(options.expectedBucketOwner ? { ExpectedBucketOwner: options.expectedBucketOwner } : {}),
    }),
  );
  // The mark is the three tags markReplayed sets; a `replayed-at` without `replayed=true` (set by hand, or
  // by something else) is not one: such a record is put back once more, which changes nothing.
  if (TagSet.find((tag) => tag.Key === REPLAYED)?.Value !== "true") return undefined;
  return TagSet.find((tag) => tag.Key === REPLAYED_AT)?.Value;
}

const MARK_TAGS: ReadonlySet<string> = new Set([REPLAYED, REPLAYED_AT, REPLAY_SEQUENCE]);

/**
 * Tags the object as replayed, with when and the record's new sequence number (the object is not
 * rewritten). PutObjectTagging replaces the whole tag set, so the object's other tags (a legal hold, a
 * cost tag, what a lifecycle rule selects on) are read first and kept.
 */
export async function markReplayed(
  s3: S3Client,
  bucket: string,
  key: string,
  mark: { readonly at: string; readonly sequenceNumber: string; readonly expectedBucketOwner?: string },
): Promise<void> {
  const owner = mark.expectedBucketOwner ? { ExpectedBucketOwner: mark.expectedBucketOwner } : {};
  const { TagSet = [] } = await s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: key, ...owner }));
  await s3.send(
    new PutObjectTaggingCommand({
      Bucket: bucket,
      Key: key,
      Tagging: {
        TagSet: [
          ...TagSet.filter((tag) => !MARK_TAGS.has(tag.Key ?? "")),
          { Key: REPLAYED, Value: "true" },
          { Key: REPLAYED_AT, Value: mark.at },
          { Key: REPLAY_SEQUENCE, Value: mark.sequenceNumber },
        ],
      },
      ...owner,
    }),
  );
}

/** The keys stored under a quarantine key prefix: one LIST per 1,000 keys. */
export async function storedQuarantineKeys(
  s3: S3Client,
  bucket: string,
  prefix: string,
): Promise<ReadonlySet<string>> {
  const keys = new Set<string>();
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: prefix,
        ...(token ? { ContinuationToken: token } : {}),
      }),
    );
    for (const object of page.Contents ?? []) if (object.Key) keys.add(object.Key);
    token = page.NextContinuationToken;
  } while (token);
  return keys;
}

export interface QuarantineCounts {
  /** Distinct records: a record quarantined again after a replay is counted once. */
  readonly total: number;
  /** Records with an object no replay has put back yet (never replayed, or given up again after one). */
  readonly awaitingReplay: number;
  /** Records every object of which is marked replayed. */
  readonly replayed: number;
  /** Objects that hold a record counted already (quarantined again after a replay, or duplicates). */
  readonly copies: number;
  readonly byReason: Record<string, number>;
  readonly byShard: Record<string, number>;
  /** By arrival day (UTC, yyyy-mm-dd). */
  readonly byDay: Record<string, number>;
}

/** The entries grouped by record (digest), each group in the entries' order; the first is the original. */
export function sameRecordGroups(entries: readonly QuarantineEntry[]): QuarantineEntry[][] {
  const groups = new Map<string, QuarantineEntry[]>();
  for (const entry of entries) {
    const group = groups.get(entry.digest);
    if (group === undefined) groups.set(entry.digest, [entry]);
    else if (!group.some((e) => e.key === entry.key)) group.push(entry);
  }
  return [...groups.values()];
}

export function countQuarantine(entries: readonly QuarantineEntry[]): QuarantineCounts {
  const byReason: Record<string, number> = {};
  const byShard: Record<string, number> = {};
  const byDay: Record<string, number> = {};
  const groups = sameRecordGroups(entries);
  const originals = groups.map((g) => g[0] as QuarantineEntry);
  for (const { record } of originals) {
    byReason[record.reason.code] = (byReason[record.reason.code] ?? 0) + 1;
    byShard[record.source.shardId] = (byShard[record.source.shardId] ?? 0) + 1;
    const day = new Date(record.source.approximateArrivalTimestamp * 1000).toISOString().slice(0, 10);
    byDay[day] = (byDay[day] ?? 0) + 1;
  }
  const awaitingReplay = groups.filter((g) => g.some((e) => e.replayedAt === undefined)).length;
  return {
    total: originals.length,
    awaitingReplay,
    replayed: originals.length - awaitingReplay,
    copies: groups.reduce((n, g) => n + g.length - 1, 0),
    byReason,
    byShard,
    byDay,
  };
}
