import type { RunningEmulator } from "./loopback.js";
import { AwsJsonContentType, type ProxiedCall, startAwsJsonProxy } from "./proxy.js";

/**
 * What Kinesis answers when a reader asks for a position before the trim horizon (a record past the
 * stream's retention):
 * - `serve-from-horizon`: GetShardIterator AT_/AFTER_SEQUENCE_NUMBER succeeds and GetRecords starts at
 *   the oldest record still held, as TRIM_HORIZON would ("TRIM_HORIZON ... points to the last untrimmed
 *   record in the shard in the system (the oldest data record in the shard)", Kinesis API reference,
 *   GetShardIterator). Kinesis Data Streams has no TrimmedDataAccessException (that is DynamoDB
 *   Streams'); the reader only sees that the first record returned is not the one it asked for.
 * - `invalid-argument`: GetShardIterator answers 400 InvalidArgumentException, the error Kinesis
 *   documents for a sequence number that does not fit the shard.
 * A reader that depends on either must treat both as "the start is no longer served".
 */
export const TrimmedStart = {
  ServeFromHorizon: "serve-from-horizon",
  InvalidArgument: "invalid-argument",
} as const;
export type TrimmedStart = (typeof TrimmedStart)[keyof typeof TrimmedStart];

export interface TrimProxy extends RunningEmulator {
  /**
   * Trims `shardId` of `streamName` up to (not including) `firstServed`: records before it are no
   * longer returned by any read, and positions before it are answered as `trimmedStart` says.
   */
  readonly trim: (streamName: string, shardId: string, firstServed: string) => void;
  readonly stats: { trimmedIterators: number; recordsHidden: number };
}

export interface TrimProxyOptions {
  readonly trimmedStart?: TrimmedStart;
}

function compare(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * A loopback proxy that makes kinesalite (which keeps every record for ever) answer as a stream whose
 * retention has trimmed a shard up to a configured sequence number. Only the JSON protocol is read.
 */
export function startKinesisTrimProxy(upstream: string, options: TrimProxyOptions = {}): Promise<TrimProxy> {
  const kinesis = new TrimmedKinesis(options.trimmedStart ?? TrimmedStart.ServeFromHorizon);
  return startAwsJsonProxy(upstream, AwsJsonContentType.V1_1, async (call) => {
    if (call.target === "Kinesis_20131202.GetShardIterator") return kinesis.getShardIterator(call);
    if (call.target === "Kinesis_20131202.GetRecords") return kinesis.getRecords(call);
    await call.pass();
  }).then((running) => ({
    ...running,
    stats: kinesis.stats,
    trim: (streamName, shardId, firstServed) => kinesis.trim(streamName, shardId, firstServed),
  }));
}

interface GetShardIteratorInput {
  StreamName?: string;
  StreamARN?: string;
  ShardId: string;
  ShardIteratorType: string;
  StartingSequenceNumber?: string;
}

/** The shards' trim horizons, the iterators the proxy handed out, and how it answers the two reads. */
class TrimmedKinesis {
  readonly stats = { trimmedIterators: 0, recordsHidden: 0 };
  readonly #trimmedStart: TrimmedStart;
  readonly #horizons = new Map<string, string>();
  // Iterators are opaque: remember which shard each one the proxy handed out reads.
  readonly #shardOfIterator = new Map<string, string>();

  constructor(trimmedStart: TrimmedStart) {
    this.#trimmedStart = trimmedStart;
  }

  trim(streamName: string, shardId: string, firstServed: string): void {
    this.#horizons.set(shardKey(streamName, shardId), firstServed);
  }

  /** A start before the horizon served from it, or refused (`invalid-argument`); the iterator's shard noted. */
  async getShardIterator(call: ProxiedCall): Promise<void> {
    const input = JSON.parse(call.body.toString("utf8")) as GetShardIteratorInput;
    const stream = input.StreamName ?? (input.StreamARN ?? "").split("/").at(-1) ?? "";
    const key = shardKey(stream, input.ShardId);
    const horizon = this.#horizons.get(key);
    let forwarded = input;
    if (horizon !== undefined && startsBefore(input, horizon)) {
      if (input.ShardIteratorType !== "TRIM_HORIZON") this.stats.trimmedIterators += 1;
      if (input.ShardIteratorType !== "TRIM_HORIZON" && this.#trimmedStart === TrimmedStart.InvalidArgument) {
        call.answerJson(400, {
          __type: "InvalidArgumentException",
          message: `StartingSequenceNumber ${input.StartingSequenceNumber} used in GetShardIterator on shard ${input.ShardId} in stream ${stream} is before the trim horizon (test trim proxy).`,
        });
        return;
      }
      forwarded = {
        ...input,
        ShardIteratorType: "AT_SEQUENCE_NUMBER",
        StartingSequenceNumber: horizon,
      };
    }
    const upstreamResponse = await call.forward(Buffer.from(JSON.stringify(forwarded)));
    const text = await upstreamResponse.text();
    if (upstreamResponse.ok) {
      const iterator = (JSON.parse(text) as { ShardIterator?: string }).ShardIterator;
      if (iterator) this.#shardOfIterator.set(iterator, key);
    }
    call.answer(upstreamResponse.status, text);
  }

  /** The upstream's page without the records before the horizon; the next iterator's shard noted. */
  async getRecords(call: ProxiedCall): Promise<void> {
    const input = JSON.parse(call.body.toString("utf8")) as { ShardIterator: string };
    const key = this.#shardOfIterator.get(input.ShardIterator);
    const upstreamResponse = await call.forward();
    const text = await upstreamResponse.text();
    if (!upstreamResponse.ok || key === undefined) {
      call.answer(upstreamResponse.status, text);
      return;
    }
    const page = JSON.parse(text) as {
      Records?: { SequenceNumber: string }[];
      NextShardIterator?: string;
    };
    if (page.NextShardIterator) this.#shardOfIterator.set(page.NextShardIterator, key);
    const horizon = this.#horizons.get(key);
    if (horizon !== undefined && page.Records) {
      const kept = page.Records.filter((r) => compare(r.SequenceNumber, horizon) >= 0);
      this.stats.recordsHidden += page.Records.length - kept.length;
      page.Records = kept;
    }
    call.answerJson(200, page);
  }
}

const shardKey = (stream: string, shard: string) => `${stream}/${shard}`;

/** Whether the iterator asked for starts before the horizon: TRIM_HORIZON, or a sequence number before it. */
function startsBefore(input: GetShardIteratorInput, horizon: string): boolean {
  return (
    input.ShardIteratorType === "TRIM_HORIZON" ||
    ((input.ShardIteratorType === "AT_SEQUENCE_NUMBER" ||
      input.ShardIteratorType === "AFTER_SEQUENCE_NUMBER") &&
      input.StartingSequenceNumber !== undefined &&
      compare(input.StartingSequenceNumber, horizon) < 0)
  );
}
