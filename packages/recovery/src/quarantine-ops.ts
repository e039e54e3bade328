import { createHash } from "node:crypto";
import type { KinesisClient } from "@aws-sdk/client-kinesis";
import {
  GetObjectTaggingCommand,
  ListObjectsV2Command,
  PutObjectTaggingCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { compareSequenceNumbers, OrderingMode, putRecords } from "@mcp-pipeline/aws";
import { type QuarantineRecord, readQuarantineRecord } from "@mcp-pipeline/quarantine";
import { sleep as realSleep, type Sleep } from "@mcp-pipeline/retry";

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

export interface QuarantineEntry {
  readonly key: string;
  readonly record: QuarantineRecord;
  /** `recordDigest` of the record: equal digests are the same record. */
  readonly digest: string;
  /**
   * Other objects of the bucket that hold the same record (same partition key and bytes), whatever
   * the filter: a copy quarantined again after a replay (the replay puts the same bytes back and the
   * processor quarantines them under their new sequence number), or a producer's duplicate send.
   */
  readonly sameAs: readonly string[];
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

/** Every quarantined record under `kinesis/` that matches, in shard then sequence order. */
export async function listQuarantine(
  s3: S3Client,
  bucket: string,
  filter: QuarantineFilter = {},
): Promise<QuarantineEntry[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: "kinesis/",
        ...(token ? { ContinuationToken: token } : {}),
      }),
    );
    for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
    token = page.NextContinuationToken;
  } while (token);
  const all: { key: string; record: QuarantineRecord; digest: string }[] = [];
  for (const key of keys) {
    const record = await readQuarantineRecord(s3, bucket, key);
    all.push({ key, record, digest: recordDigest(record) });
  }
  const keysByDigest = new Map<string, string[]>();
  for (const { key, digest } of all) keysByDigest.set(digest, [...(keysByDigest.get(digest) ?? []), key]);
  const entries: QuarantineEntry[] = all
    .filter((e) => matches(e.record, filter))
    .map((e) => ({ ...e, sameAs: (keysByDigest.get(e.digest) ?? []).filter((k) => k !== e.key) }));
  return entries.sort(
    (a, b) =>
      a.record.source.shardId.localeCompare(b.record.source.shardId) ||
      compareSequenceNumbers(a.record.source.sequenceNumber, b.record.source.sequenceNumber),
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
  return {
    total: originals.length,
    copies: groups.reduce((n, g) => n + g.length - 1, 0),
    byReason,
    byShard,
    byDay,
  };
}

/** When the object's record was put back in the stream (its `replayed-at` tag), if it was. */
export async function replayedAt(s3: S3Client, bucket: string, key: string): Promise<string | undefined> {
  const { TagSet = [] } = await s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: key }));
  return TagSet.find((tag) => tag.Key === REPLAYED_AT)?.Value;
}

/** Tags the object as replayed, with when and the record's new sequence number (the object is not rewritten). */
async function markReplayed(
  s3: S3Client,
  bucket: string,
  key: string,
  at: string,
  sequenceNumber: string,
): Promise<void> {
  await s3.send(
    new PutObjectTaggingCommand({
      Bucket: bucket,
      Key: key,
      Tagging: {
        TagSet: [
          { Key: REPLAYED, Value: "true" },
          { Key: REPLAYED_AT, Value: at },
          { Key: REPLAY_SEQUENCE, Value: sequenceNumber },
        ],
      },
    }),
  );
}

export interface ReplayOptions {
  readonly streamName: string;
  readonly dryRun?: boolean;
  /** Records per second at most. */
  readonly ratePerSecond?: number;
  readonly onProgress?: (done: number, total: number) => void;
  /** Each record put back, with its new sequence number (for a caller that waits for it to be read). */
  readonly onWritten?: (sequenceNumber: string) => void;
  readonly now?: () => number;
  readonly sleep?: Sleep;
}

export interface ReplaySummary {
  /** Distinct records matched (a record quarantined again after a replay is one record). */
  readonly matched: number;
  readonly alreadyReplayed: number;
  readonly replayed: number;
  readonly dryRun: boolean;
}

/**
 * Puts quarantined records back into the stream with their original partition keys and bytes, in
 * their original order per key (strict ordering), at most `ratePerSecond`, and marks each object once
 * its record is written (tags `replayed`, `replayed-at`), so a second replay skips it. The processor's
 * idempotency (by eventId) makes a replay safe even when a record had been applied before.
 */
export async function replayQuarantine(
  s3: S3Client,
  kinesis: KinesisClient,
  bucket: string,
  entries: readonly QuarantineEntry[],
  options: ReplayOptions,
): Promise<ReplaySummary> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? realSleep;
  // A record and its copies quarantined again after a replay are one record: it was replayed when
  // any of its objects is marked, and a replay puts it back once and marks every object of it.
  const groups = sameRecordGroups(entries);
  const pending: { entry: QuarantineEntry; keys: string[] }[] = [];
  let alreadyReplayed = 0;
  for (const group of groups) {
    const keys = [...new Set(group.flatMap((e) => [e.key, ...e.sameAs]))];
    let marked = false;
    for (const key of keys) {
      if ((await replayedAt(s3, bucket, key)) !== undefined) {
        marked = true;
        break;
      }
    }
    if (marked) alreadyReplayed += 1;
    else pending.push({ entry: group[0] as QuarantineEntry, keys });
  }
  if (options.dryRun) {
    return { matched: groups.length, alreadyReplayed, replayed: 0, dryRun: true };
  }
  const rate = options.ratePerSecond ?? 100;
  const chunk = Math.max(1, Math.min(500, rate));
  let replayed = 0;
  for (let i = 0; i < pending.length; i += chunk) {
    const started = now();
    const batch = pending.slice(i, i + chunk);
    const result = await putRecords(
      kinesis,
      { streamName: options.streamName },
      batch.map(({ entry }) => ({
        data: Buffer.from(entry.record.data, "base64"),
        partitionKey: entry.record.source.partitionKey,
      })),
      { ordering: OrderingMode.Strict },
    );
    for (const written of result.written) {
      const { keys } = batch[written.index] as { entry: QuarantineEntry; keys: string[] };
      for (const key of keys)
        await markReplayed(s3, bucket, key, new Date(now()).toISOString(), written.sequenceNumber);
      replayed += 1;
      options.onWritten?.(written.sequenceNumber);
    }
    options.onProgress?.(replayed, pending.length);
    if (result.rejected.length > 0) {
      throw new Error(
        `${result.rejected.length} records could not be put back (first: ${result.rejected[0]?.errorCode}); the ${replayed} written are marked, run the replay again to continue`,
      );
    }
    const elapsed = now() - started;
    const budget = (batch.length / rate) * 1000;
    if (i + chunk < pending.length && elapsed < budget) await sleep(budget - elapsed);
  }
  return { matched: groups.length, alreadyReplayed, replayed, dryRun: false };
}
