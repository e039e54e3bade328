import { UsageError } from "@mcp-pipeline/cli";
import { quarantineFailureKind, replayedAt } from "@mcp-pipeline/recovery";
import { QuarantineFormatError, readQuarantineObject } from "@mcp-pipeline/recovery/quarantine";
import { type Context, callerCheck, print, RecoverExit } from "../context.js";
import { bucketOf, requireBucketSource } from "../targets.js";

/** `show KEY`: one quarantined record, its data decoded. A key that is not there is named with its bucket. */
export async function show(context: Context): Promise<number> {
  const key = context.args[0];
  if (!key)
    throw new UsageError(
      "show needs the object key, e.g. kinesis/<stream>/2026/11/30/<shard>/<seq>.json (inspect --list prints them)",
    );
  requireBucketSource(context.targets);
  // The bucket is held to the caller's account (S3 answers 403 for another's), as inspect and replay do.
  const { caller } = await callerCheck(context);
  const bucket = bucketOf(context.targets, caller?.account);
  const owner = caller ? { expectedBucketOwner: caller.account } : {};
  let object: Awaited<ReturnType<typeof readQuarantineObject>>;
  try {
    object = await readQuarantineObject(context.aws.s3, bucket, key, owner);
  } catch (error) {
    const name = (error as Error).name;
    if (name === "NoSuchKey" || name === "NotFound") {
      context.io.err(`no object ${key} in bucket ${bucket}: inspect --list prints the keys there are`);
      return RecoverExit.Failed;
    }
    if (error instanceof QuarantineFormatError) {
      context.io.err(
        `${error.message} (bucket ${bucket}): look at it with aws s3 cp s3://${bucket}/${key} -`,
      );
      return RecoverExit.Failed;
    }
    throw error;
  }
  const { record, tagCount } = object;
  // A replay marks an object by tags (the object is never rewritten): what inspect and replay read too.
  const replayed = tagCount === 0 ? undefined : await replayedAt(context.aws.s3, bucket, key, owner);
  const bytes = Buffer.from(record.data, "base64");
  const text = bytes.toString("utf8");
  let decoded: unknown = text;
  try {
    decoded = JSON.parse(text);
  } catch {
    // Not JSON: shown as text (or base64 when not UTF-8), which is often why it was quarantined.
    if (Buffer.from(text, "utf8").compare(bytes) !== 0) decoded = { base64: record.data };
  }
  const shown = { ...record, kind: quarantineFailureKind(record), replayedAt: replayed ?? null };
  print(context, JSON.stringify({ ...shown, data: decoded }, null, 2), { ...shown, decoded });
  return RecoverExit.Ok;
}
