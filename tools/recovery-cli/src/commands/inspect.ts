import { countQuarantine, FailureKind, type QuarantineEntry } from "@mcp-pipeline/recovery";
import {
  ageOf,
  type Context,
  callerCheck,
  maxOf,
  print,
  quarantineFilter,
  RecoverExit,
  scanFiltered,
} from "../context.js";
import { printable } from "../printable.js";
import { bucketOf, requireBucketSource } from "../targets.js";

/** Where a record stands: never replayed, replayed and given up again since, or put back. */
function state(entry: QuarantineEntry): string {
  if (entry.replayedAt !== undefined) return `replayed ${entry.replayedAt}`;
  return entry.objects.some((o) => o.replayedAt !== undefined)
    ? "waiting (given up again after a replay)"
    : "waiting";
}

/**
 * `inspect`: counts of quarantined records by reason, shard and day, or with --list one line per object
 * (key, reason, kind, age, replayed or not) so that `show` can be given a key. An object that cannot be
 * read is listed as such and skipped.
 */
export async function inspect(context: Context): Promise<number> {
  const filter = quarantineFilter(context.flags);
  requireBucketSource(context.targets);
  const { caller } = await callerCheck(context);
  const bucket = bucketOf(context.targets, caller?.account);
  const scan = await scanFiltered(context, bucket, filter, caller?.account);
  const unreadable = scan.unreadable.map(
    (u) => `  ${printable(u.key)}: ${u.error.name}: ${printable(u.error.message)}`,
  );
  const unreadableText =
    unreadable.length === 0
      ? ""
      : `\n${unreadable.length} object${unreadable.length === 1 ? "" : "s"} under kinesis/ could not be read (skipped, left as they are; look with aws s3 cp):\n${unreadable.join("\n")}`;
  const badJournals = scan.journals.unreadable.map(
    (u) => `  ${printable(u.key)}: ${u.error.name}: ${printable(u.error.message)}`,
  );
  const journalText =
    badJournals.length === 0
      ? ""
      : `\n${badJournals.length} replay journal${badJournals.length === 1 ? "" : "s"} under replays/ could not be read (ignored: the objects they name were read in full):\n${badJournals.join("\n")}`;
  if (context.flags.list) {
    const max = maxOf(context.flags);
    const shown = max === undefined ? scan.entries : scan.entries.slice(0, max);
    const rows = shown.map(
      (e) =>
        `${e.key}\n    ${e.record.reason.code} (${e.kind}), quarantined ${ageOf(context, Date.parse(e.record.quarantinedAt))} ago, session ${printable(e.record.source.partitionKey)}, ${state(e)}`,
    );
    const more = scan.entries.length - shown.length;
    print(
      context,
      `${scan.entries.length} objects in ${bucket}${more > 0 ? ` (the first ${shown.length} below)` : ""}:\n${rows.join("\n")}${unreadableText}${journalText}`,
      {
        bucket,
        objects: shown.map((e) => ({
          key: e.key,
          reason: e.record.reason.code,
          kind: e.kind,
          quarantinedAt: e.record.quarantinedAt,
          partitionKey: e.record.source.partitionKey,
          replayedAt: e.replayedAt ?? null,
          givenUpAgain: e.replayedAt === undefined && e.objects.some((o) => o.replayedAt !== undefined),
        })),
        more,
        unreadable: scan.unreadable,
      },
    );
    return RecoverExit.Ok;
  }
  const counts = countQuarantine(scan.entries);
  const kinds = new Map<string, string>();
  for (const e of scan.entries) kinds.set(e.record.reason.code, e.kind);
  const table = (title: string, rows: Record<string, number>, kind = false) =>
    [
      `${title}:`,
      ...Object.entries(rows)
        .sort()
        .map(
          ([k, n]) =>
            `  ${k.padEnd(40)} ${String(n).padStart(6)}${kind ? `  ${kinds.get(k) ?? FailureKind.Permanent}` : ""}`,
        ),
    ].join("\n");
  print(
    context,
    [
      `${counts.total} quarantined records in ${bucket}: ${counts.awaitingReplay} waiting for a replay, ${counts.replayed} replayed` +
        (counts.copies > 0
          ? ` (and ${counts.copies} objects holding one of them again: given up again after a replay, or sent twice; counted once)`
          : ""),
      table("by reason", counts.byReason, true),
      table("by shard", counts.byShard),
      table("by day", counts.byDay),
    ].join("\n") +
      unreadableText +
      journalText,
    { bucket, ...counts, unreadable: scan.unreadable },
  );
  return RecoverExit.Ok;
}
