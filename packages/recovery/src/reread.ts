import {
  type _Record,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type KinesisClient,
} from "@aws-sdk/client-kinesis";
import { compareSequenceNumbers } from "@mcp-pipeline/aws";
import { streamNameOfArn } from "@mcp-pipeline/aws/arn";
import { backoffDelayMs, Jitter, sleep as realSleep, retry, type Sleep } from "@mcp-pipeline/retry";

export interface SequenceRange {
  readonly streamArn: string;
  readonly shardId: string;
  readonly start: string;
  readonly end: string;
}

export interface RereadResult {
  /** The range's records that the stream still held, in order. */
  readonly records: readonly _Record[];
  /** Why records are missing, when some are: the range was trimmed, or the shard is gone. */
  readonly gap?: string;
}

export interface RereadOptions {
  readonly maxAttempts?: number;
  readonly sleep?: Sleep;
}

const THROTTLED = new Set([
  "ProvisionedThroughputExceededException",
  "LimitExceededException",
  "KMSThrottlingException",
]);

/** 200, 400, 800 ... ms ceilings, at most 5 s, at least half of each waited. */
const THROTTLE_BACKOFF = { baseMs: 200, capMs: 5_000, jitter: Jitter.Equal } as const;

/**
 * Reads the records of a sequence range back from the stream: GetShardIterator AT_SEQUENCE_NUMBER,
 * then GetRecords until past the end. Throttling backs off and retries; an expired iterator is renewed
 * after the last record read. A range the stream no longer holds (trimmed past retention, or a shard
 * that no longer exists) is not an error: the result says what was found and why the rest is missing.
 * A trimmed start shows either as records that begin after it (Kinesis serves from the trim horizon)
 * or as InvalidArgumentException (then the rest of the range is read from TRIM_HORIZON); either way
 * `gap` is set, because the range's first record is gone.
 */
export async function rereadRange(
  kinesis: KinesisClient,
  range: SequenceRange,
  options: RereadOptions = {},
): Promise<RereadResult> {
  const records: _Record[] = [];
  const withRetry: WithRetry = (call) =>
    retry(call, {
      maxAttempts: options.maxAttempts ?? 8,
      retryable: (error) => THROTTLED.has((error as Error).name),
      delayMs: (r) => backoffDelayMs(r, THROTTLE_BACKOFF),
      sleep: options.sleep ?? realSleep,
    });
  const iteratorFrom: IteratorFrom = async (type, sequence) =>
    (
      await withRetry(() =>
        kinesis.send(
          new GetShardIteratorCommand({
            // By name, derived from the ARN: older endpoints (kinesalite) do not take StreamARN.
            StreamName: streamNameOfArn(range.streamArn),
            ShardId: range.shardId,
            ShardIteratorType: type,
            ...(sequence !== undefined ? { StartingSequenceNumber: sequence } : {}),
          }),
        ),
      )
    ).ShardIterator;

  const start = await startIterator(iteratorFrom, range, records);
  if ("gone" in start) return start.gone;
  let iterator = start.iterator;
  while (iterator) {
    const page = await pageOrExpired(kinesis, withRetry, iterator);
    if (page === undefined) {
      // Renewed after the last record read, so none is read twice; at the start if none was read yet.
      const last = records.at(-1)?.SequenceNumber;
      iterator = last
        ? await iteratorFrom("AFTER_SEQUENCE_NUMBER", last)
        : await iteratorFrom("AT_SEQUENCE_NUMBER", range.start);
      continue;
    }
    if (collect(records, range, page)) return finish(records, range);
    iterator = page.NextShardIterator;
  }
  return finish(records, range);
}

type WithRetry = <T>(call: () => Promise<T>) => Promise<T>;
type IteratorType = "AT_SEQUENCE_NUMBER" | "AFTER_SEQUENCE_NUMBER" | "TRIM_HORIZON";
type IteratorFrom = (type: IteratorType, sequence?: string) => Promise<string | undefined>;
type StartingPoint = { readonly iterator: string | undefined } | { readonly gone: RereadResult };

/** Where reading starts: the range's start, else the trim horizon; a shard that is gone is a gap. */
async function startIterator(
  iteratorFrom: IteratorFrom,
  range: SequenceRange,
  records: readonly _Record[],
): Promise<StartingPoint> {
  try {
    return { iterator: await iteratorFrom("AT_SEQUENCE_NUMBER", range.start) };
  } catch (error) {
    const name = (error as Error).name;
    const gone = {
      gone: {
        records,
        gap: `the stream no longer serves ${range.shardId} at ${range.start} (${name}: ${(error as Error).message})`,
      },
    };
    if (name === "ResourceNotFoundException") return gone;
    if (name !== "InvalidArgumentException") throw error;
    // The start is refused (before the trim horizon, where an endpoint answers so): what is left of
    // the range is read from the oldest record the shard still holds; finish() names the gap.
    try {
      return { iterator: await iteratorFrom("TRIM_HORIZON") };
    } catch (again) {
      if ((again as Error).name !== "ResourceNotFoundException") throw again;
      return gone;
    }
  }
}

/** A page of records, or undefined when the iterator has expired (the caller renews it). */
async function pageOrExpired(
  kinesis: KinesisClient,
  withRetry: WithRetry,
  iterator: string,
): Promise<GetRecordsCommandOutput | undefined> {
  try {
    return await withRetry(() =>
      kinesis.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1_000 })),
    );
  } catch (error) {
    if ((error as Error).name !== "ExpiredIteratorException") throw error;
    return undefined;
  }
}

/** Keeps the page's records within the range; true once the range can hold no more. */
function collect(records: _Record[], range: SequenceRange, page: GetRecordsCommandOutput): boolean {
  for (const record of page.Records ?? []) {
    const sequence = record.SequenceNumber ?? "";
    if (compareSequenceNumbers(sequence, range.end) > 0) return true;
    if (compareSequenceNumbers(sequence, range.start) >= 0) records.push(record);
  }
  // Caught up with the shard's tip, or the shard is closed: the range cannot extend further.
  return (page.Records ?? []).length === 0 && (page.MillisBehindLatest ?? 0) === 0;
}

function finish(records: readonly _Record[], range: SequenceRange): RereadResult {
  const first = records[0]?.SequenceNumber;
  if (first === undefined)
    return { records, gap: `no record of ${range.start}..${range.end} is left in ${range.shardId}` };
  if (first !== range.start) {
    return {
      records,
      gap: `${range.shardId} starts at ${first} now: records from ${range.start} were trimmed`,
    };
  }
  return { records };
}
