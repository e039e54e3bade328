/** One PutRecords request and what its answer says about each entry it carried. */
import {
  type KinesisClient,
  PutRecordsCommand,
  type PutRecordsCommandOutput,
  type PutRecordsRequestEntry,
} from "@aws-sdk/client-kinesis";
import { messageOf } from "@mcp-pipeline/contracts";
import { type RequestOptions, sendOptions } from "./request-options.js";

export interface ProducerRecord {
  readonly data: Uint8Array;
  readonly partitionKey: string;
  readonly explicitHashKey?: string;
}

export type StreamTarget = { readonly streamName: string } | { readonly streamArn: string };

export interface EntryError {
  readonly code: string;
  readonly message: string;
}

/** What became of one entry of an answered request, by its record's input index. */
export type EntryOutcome =
  | {
      readonly index: number;
      readonly written: true;
      readonly shardId: string;
      readonly sequenceNumber: string;
    }
  | { readonly index: number; readonly written: false; readonly error: EntryError };

/**
 * A request Kinesis answered (each entry written or failed on its own), or one that failed as a whole:
 * the network, a throttle, a 5xx (worth sending again) or a refusal that can only repeat (a missing
 * stream, a denial).
 */
export type RequestOutcome =
  | { readonly kind: "answered"; readonly entries: readonly EntryOutcome[] }
  | { readonly kind: "failed"; readonly error: EntryError; readonly retryable: boolean };

/** Errors after which the same request can only fail again are not retryable. */
export function isRetryableRequestError(error: unknown): boolean {
  const name = (error as { name?: unknown }).name;
  if (name === "ProvisionedThroughputExceededException" || name === "KMSThrottlingException") return true;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status === undefined || status >= 500 || status === 429;
}

/**
 * Each entry's outcome from PutRecords' answer, which lists results in the request's order: written when
 * the result has a shard and a sequence number and no error code; otherwise failed with Kinesis's code, or
 * `MissingResult` when the answer has no result at that position.
 */
export function entryOutcomes(
  request: readonly number[],
  results: PutRecordsCommandOutput["Records"],
): EntryOutcome[] {
  return request.map((index, position) => {
    const entry = results?.[position];
    if (entry?.SequenceNumber && entry.ShardId && !entry.ErrorCode)
      return { index, written: true, shardId: entry.ShardId, sequenceNumber: entry.SequenceNumber };
    return {
      index,
      written: false,
      error: {
        code: entry?.ErrorCode ?? "MissingResult",
        message: entry?.ErrorMessage ?? "no result for this entry in the response",
      },
    };
  });
}

/** Sends the records at `request` (input indices) in one PutRecords request; never throws. */
export async function sendPutRequest(
  client: KinesisClient,
  target: StreamTarget,
  records: readonly ProducerRecord[],
  request: readonly number[],
  options: RequestOptions,
): Promise<RequestOutcome> {
  const entries: PutRecordsRequestEntry[] = request.map((i) => {
    const record = records[i] as ProducerRecord;
    return {
      Data: record.data,
      PartitionKey: record.partitionKey,
      ...(record.explicitHashKey !== undefined ? { ExplicitHashKey: record.explicitHashKey } : {}),
    };
  });
  try {
    const response = await client.send(
      new PutRecordsCommand({
        Records: entries,
        ...("streamArn" in target ? { StreamARN: target.streamArn } : { StreamName: target.streamName }),
      }),
      sendOptions(options),
    );
    return { kind: "answered", entries: entryOutcomes(request, response.Records) };
  } catch (error) {
    return {
      kind: "failed",
      error: { code: (error as { name?: string }).name ?? "Error", message: messageOf(error) },
      retryable: isRetryableRequestError(error),
    };
  }
}
