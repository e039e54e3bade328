import {
  GetObjectCommand,
  type GetObjectCommandOutput,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { quarantineKeyFor } from "./format.js";
import type { QuarantineRecord } from "./schema.js";
import { describeIssues, type QuarantineIssue, validateQuarantineRecord } from "./schema.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

export class QuarantineFormatError extends Error {
  readonly key: string;

  constructor(key: string, message: string, options?: ErrorOptions) {
    super(`quarantine object ${key} is not a v1 quarantine record: ${message}`, options);
    this.name = "QuarantineFormatError";
    this.key = key;
  }
}

/** A record handed to the writer that the format does not allow: nothing is written. */
export class InvalidQuarantineRecordError extends Error {
  readonly issues: readonly QuarantineIssue[];

  constructor(issues: readonly QuarantineIssue[]) {
    super(`not a v1 quarantine record: ${describeIssues(issues)}`);
    this.name = "InvalidQuarantineRecordError";
    this.issues = issues;
  }
}

/**
 * Stores a quarantine record and resolves only once S3 has it: the caller acknowledges the record
 * to its event source right after, so this write is what stands between the record and its loss.
 *
 * Always a conditional write (`If-None-Match: *`): the quarantine is the only copy of a failed record, so
 * an object once stored is never replaced, not by a second write of the same record (a retried batch, a
 * redelivered failure record: the same key, since the key is the record's position) and not by a writer
 * that got the key wrong. S3 answers 412 when the key exists; that is `written: false`, and the record is
 * stored all the same. The bucket's policy refuses a PutObject without the condition
 * (terraform/modules/bucket). fauxqs ignores the condition and overwrites; moto answers as S3 does
 * (test/store.moto.test.ts).
 */
export async function writeQuarantineRecord(
  s3: S3Client,
  bucket: string,
  record: QuarantineRecord,
  options: { readonly signal?: AbortSignal } = {},
): Promise<{ key: string; written: boolean }> {
  const validation = validateQuarantineRecord(record);
  if (!validation.success) throw new InvalidQuarantineRecordError(validation.issues);
  const parsed = validation.data;
  const key = quarantineKeyFor(parsed.source);
  try {
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: JSON.stringify(parsed),
        ContentType: "application/json",
        IfNoneMatch: "*",
      }),
      // An invocation's deadline (RequestOptions in @mcp-pipeline/aws): the write is abandoned, and may still
      // have been stored; its key is the record's own, so a second write is the same object.
      options.signal ? { abortSignal: options.signal } : {},
    );
  } catch (error) {
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (status === 412 || (error as Error).name === "PreconditionFailed") {
      return { key, written: false };
    }
    throw error;
  }
  return { key, written: true };
}

/** A quarantine object as stored: the record, and the object's user metadata (a replay's mark, for one). */
export interface QuarantineObject {
  readonly record: QuarantineRecord;
  readonly metadata: Readonly<Record<string, string>>;
  /** How many tags the object has (S3's x-amz-tagging-count); undefined where the endpoint does not say. */
  readonly tagCount: number | undefined;
}

/**
 * One GET of an object's whole bytes, with the response (metadata, tag count). `expectedBucketOwner` makes S3
 * refuse (403) a bucket that another account owns. The quarantine's records and the replay journals use it.
 */
export async function getObjectBytes(
  s3: S3Client,
  bucket: string,
  key: string,
  options: { readonly expectedBucketOwner?: string } = {},
): Promise<{ readonly response: GetObjectCommandOutput; readonly bytes: Uint8Array }> {
  const response = await s3.send(
    new GetObjectCommand({
      Bucket: bucket,
      Key: key,
      ...(options.expectedBucketOwner ? { ExpectedBucketOwner: options.expectedBucketOwner } : {}),
    }),
  );
  return { response, bytes: (await response.Body?.transformToByteArray()) ?? new Uint8Array() };
}

export async function readQuarantineRecord(
  s3: S3Client,
  bucket: string,
  key: string,
): Promise<QuarantineRecord> {
  return (await readQuarantineObject(s3, bucket, key)).record;
}

/**
 * The record and its metadata in one GET. `expectedBucketOwner` makes S3 refuse (403) a bucket that
 * another account owns, so a bucket name from the wrong environment is not read as if it were ours.
 */
export async function readQuarantineObject(
  s3: S3Client,
  bucket: string,
  key: string,
  options: { readonly expectedBucketOwner?: string } = {},
): Promise<QuarantineObject> {
  const { response, bytes } = await getObjectBytes(s3, bucket, key, options);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch (cause) {
    // Read leniently, bad bytes would become U+FFFD: a replay would put the record back under another
    // partition key. The object stays as it is for a person to look at.
    throw new QuarantineFormatError(key, "not UTF-8", { cause });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new QuarantineFormatError(key, "not JSON", { cause });
  }
  const parsed = validateQuarantineRecord(json);
  if (!parsed.success)
    throw new QuarantineFormatError(key, describeIssues(parsed.issues), { cause: parsed.issues });
  return { record: parsed.data, metadata: response.Metadata ?? {}, tagCount: response.TagCount };
}
