import { randomUUID } from "node:crypto";
import { ListObjectsV2Command, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import * as s from "@mcp-pipeline/contracts/light-schema";
import { describeIssue } from "@mcp-pipeline/contracts/schema-issues";
import {
  getObjectBytes,
  type QuarantineRecord,
  validateQuarantineRecord,
} from "@mcp-pipeline/recovery/quarantine";
import { forEachBounded } from "./bounded.js";
import { throwIfInterrupted } from "./interrupted.js";

/**
 * The replay journal: once a replay chunk's objects are marked (their tags), the replay writes one object
 * under `replays/` that names each object it marked, with the object's record and mark. A later scan lists
 * the journals beside the records and does not read again an object a journal names: a quarantine of
 * 50,000 objects of which 40,000 were put back costs a replay 10,000 GETs, not 50,000 GETs and 40,000
 * GetObjectTagging. The tags stay the authority (the lifecycle rule selects on them, `show` reads them,
 * a full scan reads them); the journal only saves reading them again. So a mark changed by hand after its
 * journal is seen only by what reads the tags (`show`, a full scan): nothing a listing shows changes with the
 * tags (docs/aws-semantics.md §11 "Listing"), and reading them all again is what the journal saves
 * (docs/operations.md "The replay journal").
 *
 * Why the whole record and not only what the plan needs of it: a record given up again after its replay is
 * put back with the bytes of its first object, which is the one the journal names; and `inspect` prints
 * what the scan returns, which must be the same with or without the journal. A chunk is up to 500 records
 * of up to 1 MiB each (docs/aws-semantics.md §1.8), several PutRecords requests: its records, in base64, can
 * come to some 670 MiB. So a chunk's journal is as many objects as it takes for each to stay under
 * JOURNAL_MAX_BYTES (splitJournal), and a scan reads JOURNAL_READ_CONCURRENCY of them at once.
 */
export const REPLAY_JOURNAL_PREFIX = "replays/";
export const REPLAY_JOURNAL_FORMAT_VERSION = 1;

/**
 * The most bytes one journal object holds, unless one record alone is larger (it then has a journal of its
 * own). Why 2 MiB: the largest record Kinesis takes (1 MiB of data, §1.8) is about 1.4 MiB in a journal
 * (base64 and its envelope), so every record fits one journal; and a journal read is held some four times
 * while it is parsed (the SDK's chunks, their concatenation, the decoded text, the parsed records), so the
 * JOURNAL_READ_CONCURRENCY journals in flight hold about 4 x 2 MiB x 4 = 32 MiB, beside the records the scan
 * keeps in any case: an eighth of dlq-redrive's 256 MB. A smaller cap costs GETs only where records are large:
 * 500 records of up to 2 KiB of data each are still one journal, one GET for 1,000 saved.
 */
export const JOURNAL_MAX_BYTES = 2 * 1024 * 1024;

/**
 * Journals a scan reads at once, fewer than the objects it reads at once (16): a journal is up to
 * JOURNAL_MAX_BYTES where an object is mostly a few KiB (the memory above), and there are few of them beside
 * the objects they stand for.
 */
export const JOURNAL_READ_CONCURRENCY = 4;

/** One object a replay marked: its key, its record as the scan read it, and the mark's tags. */
export interface JournalObject {
  readonly key: string;
  readonly record: QuarantineRecord;
  /** The `replayed-at` tag set on the object. */
  readonly replayedAt: string;
  /** The `replay-sequence-number` tag: where the record went back into the stream. */
  readonly replaySequenceNumber: string;
}

export interface ReplayJournal {
  readonly formatVersion: typeof REPLAY_JOURNAL_FORMAT_VERSION;
  readonly kind: "replay-journal";
  readonly writtenAt: string;
  /** The stream the chunk went back into. */
  readonly streamName: string;
  readonly objects: readonly JournalObject[];
}

const journalSchema = s.object({
  formatVersion: s.literal(REPLAY_JOURNAL_FORMAT_VERSION),
  kind: s.literal("replay-journal"),
  writtenAt: s.datetime(),
  streamName: s.text({ min: 1 }),
  // light-schema has no arrays: each object is checked below, its record by the quarantine format.
  objects: s.unknown(),
});

const journalObjectSchema = s.object({
  key: s.text({ min: 1 }),
  replayedAt: s.datetime(),
  replaySequenceNumber: s.text({ pattern: /^\d{1,128}$/ }),
  record: s.unknown(),
});

/** A journal this code cannot use: it is reported and ignored, and the objects it names are read in full. */
export class ReplayJournalFormatError extends Error {
  readonly key: string;

  constructor(key: string, message: string, options?: ErrorOptions) {
    super(`replay journal ${key} is not a v1 replay journal: ${message}`, options);
    this.name = "ReplayJournalFormatError";
    this.key = key;
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Checks a journal's bytes against the format: every object's record as the quarantine reader checks it. */
export function parseReplayJournal(key: string, bytes: Uint8Array): ReplayJournal {
  let json: unknown;
  try {
    json = JSON.parse(utf8.decode(bytes));
  } catch (cause) {
    throw new ReplayJournalFormatError(key, "not UTF-8 JSON", { cause });
  }
  const header = journalSchema.safeParse(json);
  if (!header.success) throw new ReplayJournalFormatError(key, header.error.message);
  if (!Array.isArray(header.data.objects)) throw new ReplayJournalFormatError(key, "objects: Expected array");
  const objects: JournalObject[] = [];
  for (const [index, value] of header.data.objects.entries()) {
    const object = journalObjectSchema.safeParse(value);
    if (!object.success) throw new ReplayJournalFormatError(key, `objects.${index}: ${object.error.message}`);
    const record = validateQuarantineRecord(object.data.record);
    if (!record.success)
      throw new ReplayJournalFormatError(
        key,
        `objects.${index}.record: ${record.issues.map((i) => describeIssue(i)).join("; ")}`,
      );
    const { key: objectKey, replayedAt, replaySequenceNumber } = object.data;
    objects.push({ key: objectKey, record: record.data, replayedAt, replaySequenceNumber });
  }
  return { ...header.data, objects };
}

/**
 * A chunk's marked objects as journals, in order: each journal's JSON (as writeReplayJournal sends it) at most
 * `maxBytes`, but for an object that alone is larger, which has a journal of its own. `header` is what every
 * journal holds besides its objects.
 */
export function splitJournal(
  header: Omit<ReplayJournal, "objects">,
  objects: readonly JournalObject[],
  maxBytes: number = JOURNAL_MAX_BYTES,
): ReplayJournal[] {
  // `{...header,"objects":[]}`: each object adds its JSON, and a comma after the first.
  const empty = Buffer.byteLength(JSON.stringify({ ...header, objects: [] }));
  const journals: ReplayJournal[] = [];
  let current: JournalObject[] = [];
  let size = empty;
  for (const object of objects) {
    const bytes = Buffer.byteLength(JSON.stringify(object));
    if (current.length > 0 && size + 1 + bytes > maxBytes) {
      journals.push({ ...header, objects: current });
      current = [];
      size = empty;
    }
    size += (current.length > 0 ? 1 : 0) + bytes;
    current.push(object);
  }
  if (current.length > 0) journals.push({ ...header, objects: current });
  return journals;
}

/** `replays/<when>-<uuid>.json`: unique, so that the conditional create never meets an existing key. */
export function replayJournalKey(at: number): string {
  return `${REPLAY_JOURNAL_PREFIX}${new Date(at).toISOString().replace(/:/g, "-")}-${randomUUID()}.json`;
}

/**
 * Stores a journal, as a new object only (`If-None-Match: *`, docs/aws-semantics.md §11 "Conditional
 * writes"): the quarantine bucket's policy refuses any other PutObject (terraform/modules/bucket).
 */
export async function writeReplayJournal(
  s3: S3Client,
  bucket: string,
  journal: ReplayJournal,
  options: { readonly key: string; readonly expectedBucketOwner?: string },
): Promise<void> {
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: options.key,
      Body: JSON.stringify(journal),
      ContentType: "application/json",
      IfNoneMatch: "*",
      ...(options.expectedBucketOwner ? { ExpectedBucketOwner: options.expectedBucketOwner } : {}),
    }),
  );
}

/** An object listed, with when S3 stored it (absent where the endpoint does not say). */
export interface ListedObject {
  readonly key: string;
  readonly lastModified: number | undefined;
}

/** Every object under a prefix: one LIST per 1,000 keys (§11 "Listing"). */
export async function listObjects(
  s3: S3Client,
  bucket: string,
  prefix: string,
  options: { readonly expectedBucketOwner?: string; readonly signal?: AbortSignal },
): Promise<ListedObject[]> {
  const objects: ListedObject[] = [];
  let token: string | undefined;
  do {
    throwIfInterrupted(options.signal);
    const page = await s3.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: prefix,
        ...(token ? { ContinuationToken: token } : {}),
        ...(options.expectedBucketOwner ? { ExpectedBucketOwner: options.expectedBucketOwner } : {}),
      }),
    );
    for (const object of page.Contents ?? [])
      if (object.Key) objects.push({ key: object.Key, lastModified: object.LastModified?.getTime() });
    token = page.NextContinuationToken;
  } while (token);
  return objects;
}

/** A journal read, with when S3 stored it. */
export interface ReadJournal {
  readonly key: string;
  readonly lastModified: number | undefined;
  readonly journal: ReplayJournal;
}

/**
 * Every journal under `replays/`, read and checked; one that cannot be read or checked is handed to
 * `onUnreadable` (its objects are then read in full). `isUnreadable` says which errors are the object's
 * own (reported) and which the listing's (thrown): the scan's rule. A listing of `replays/` refused in the
 * same way (a role whose `s3:ListBucket` is held to `s3:prefix` `kinesis/`, what a scan needed before the
 * journals) is handed to `onUnreadable` under the prefix itself: no journal is used and every object is read,
 * as before the journals.
 */
export async function readReplayJournals(
  s3: S3Client,
  bucket: string,
  options: {
    readonly concurrency: number;
    readonly expectedBucketOwner?: string;
    readonly signal?: AbortSignal;
    readonly isUnreadable: (error: unknown) => boolean;
    readonly onUnreadable: (key: string, error: Error) => void;
  },
): Promise<ReadJournal[]> {
  let listed: ListedObject[];
  try {
    listed = await listObjects(s3, bucket, REPLAY_JOURNAL_PREFIX, options);
  } catch (error) {
    if (!options.isUnreadable(error)) throw error;
    const refused = error as Error;
    const reported = new Error(
      `the journals cannot be listed (${refused.message}): none is used, every object is read in full`,
      { cause: error },
    );
    reported.name = refused.name;
    options.onUnreadable(REPLAY_JOURNAL_PREFIX, reported);
    return [];
  }
  const read: (ReadJournal | undefined)[] = new Array(listed.length);
  await forEachBounded(listed, options.concurrency, async ({ key, lastModified }, index) => {
    throwIfInterrupted(options.signal);
    try {
      const { bytes } = await getObjectBytes(s3, bucket, key, options);
      read[index] = { key, lastModified, journal: parseReplayJournal(key, bytes) };
    } catch (error) {
      if (!(error instanceof ReplayJournalFormatError) && !options.isUnreadable(error)) throw error;
      options.onUnreadable(key, error as Error);
    }
  });
  return read.filter((j) => j !== undefined);
}

/** S3 dates a listed object to the second (`LastModified`, §11 "Listing"): the second an instant falls in. */
const second = (at: number) => Math.floor(at / 1000);

/**
 * Which listed objects the journals stand for: those a journal names and that S3 stored in an earlier second
 * than the journal. An object marked is older than the journal its replay wrote after the marks; an object
 * stored at the same key after the journal, once the named one expired, is another object and is read. A
 * listing dates both to the second (§11 "Listing"), so an object of the journal's own second may have been
 * stored after it: it is read in full, which costs two requests and cannot hide a record. A key no longer
 * listed (expired) is not in `listed` and is ignored.
 *
 * Where two journals name a key, two replays marked it: the tags hold the mark of the later tagging, whose
 * `replayed-at` is the later one, whichever journal S3 stored last (a replay's journal waits for all of its
 * chunk's marks and may be stored after another replay's journal of the same records). Equal marks' times
 * keep the later journal's.
 */
export function journalCoverage(
  listed: readonly ListedObject[],
  journals: readonly ReadJournal[],
): Map<string, JournalObject> {
  const storedAt = new Map(listed.map((o) => [o.key, o.lastModified]));
  const covered = new Map<string, { object: JournalObject; markedAt: number; journalAt: number }>();
  for (const { lastModified: journalAt, journal } of journals) {
    // An endpoint that does not date its objects gives nothing to hold a key to: read it in full.
    if (journalAt === undefined) continue;
    for (const object of journal.objects) {
      const objectAt = storedAt.get(object.key);
      if (objectAt === undefined || second(objectAt) >= second(journalAt)) continue;
      // parseReplayJournal checked it is a datetime.
      const markedAt = Date.parse(object.replayedAt);
      const before = covered.get(object.key);
      if (
        before === undefined ||
        before.markedAt < markedAt ||
        (before.markedAt === markedAt && before.journalAt <= journalAt)
      )
        covered.set(object.key, { object, markedAt, journalAt });
    }
  }
  return new Map([...covered].map(([key, { object }]) => [key, object]));
}
