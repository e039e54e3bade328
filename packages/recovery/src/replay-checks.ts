import { DescribeStreamSummaryCommand, type KinesisClient } from "@aws-sdk/client-kinesis";
import { type Check, failed, passed } from "./checks.js";
import type { ReplayItem } from "./replay-quarantine.js";

export interface ReplayStreamCheck {
  readonly checks: readonly Check[];
  /** The target stream's ARN, when it exists. */
  readonly streamArn?: string;
}

/** A stream takes PutRecords while ACTIVE, and while UPDATING (a reshard or retention change). */
const WRITABLE = new Set(["ACTIVE", "UPDATING"]);

/**
 * What a replay into `streamName` needs, checked without writing: the stream exists and takes writes,
 * and every record to put back came from that very stream (`source.streamArn`), so a stale variable
 * cannot put one environment's records into another's stream.
 */
export async function checkReplayStream(
  kinesis: KinesisClient,
  streamName: string,
  items: readonly ReplayItem[],
): Promise<ReplayStreamCheck> {
  let streamArn: string;
  let status: string;
  try {
    const { StreamDescriptionSummary: s } = await kinesis.send(
      new DescribeStreamSummaryCommand({ StreamName: streamName }),
    );
    streamArn = s?.StreamARN ?? "";
    status = s?.StreamStatus ?? "unknown";
  } catch (error) {
    const name = (error as Error).name;
    if (name === "ResourceNotFoundException")
      return {
        checks: [
          failed(
            "stream",
            `${streamName} does not exist in the region the caller reaches (${await kinesis.config.region()})`,
          ),
        ],
      };
    if (/AccessDenied/i.test(name))
      return {
        checks: [
          failed(
            "stream",
            `the caller may not read ${streamName} (kinesis:DescribeStreamSummary): ${(error as Error).message}`,
          ),
        ],
      };
    throw error;
  }
  const checks: Check[] = [
    WRITABLE.has(status)
      ? passed("stream", `${streamName} is ${status} (${streamArn})`)
      : failed("stream", `${streamName} is ${status}, not ACTIVE: it takes no records now`),
  ];
  const foreign = new Map<string, number>();
  for (const { entry } of items) {
    const from = entry.record.source.streamArn;
    if (from !== streamArn) foreign.set(from, (foreign.get(from) ?? 0) + 1);
  }
  if (foreign.size === 0) {
    checks.push(
      passed(
        "records' stream",
        items.length === 0 ? "no record to put back" : `all ${items.length} records came from ${streamArn}`,
      ),
    );
  } else {
    const list = [...foreign].map(([arn, n]) => `${n} from ${arn}`).join(", ");
    checks.push(
      failed(
        "records' stream",
        `${list}, not from the target ${streamArn}: a replay puts records back into the stream they came from (--stream names it)`,
      ),
    );
  }
  return { checks, streamArn };
}
