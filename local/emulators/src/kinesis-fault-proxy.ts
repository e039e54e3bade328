import type { RunningEmulator } from "./loopback.js";
import { AwsJsonContentType, startAwsJsonProxy } from "./proxy.js";

export interface PutRecordsEntryView {
  readonly partitionKey: string;
  /** The record's data, decoded from the request's base64. */
  readonly data: Buffer;
  /** Position in its request. */
  readonly position: number;
  /** 1 for the first PutRecords request the proxy sees, then 2, 3... */
  readonly request: number;
}

export interface FaultProxy extends RunningEmulator {
  /** PutRecords requests seen, entries rejected, and GetRecords calls throttled by the proxy. */
  readonly stats: { putRecordsRequests: number; rejectedEntries: number; throttledGetRecords: number };
}

/**
 * The per-entry error codes PutRecords answers with (Kinesis API reference, PutRecordsResultEntry:
 * "ErrorCodes can be either ProvisionedThroughputExceededException or InternalFailure";
 * https://docs.aws.amazon.com/kinesis/latest/APIReference/API_PutRecordsResultEntry.html). The request
 * itself succeeds (HTTP 200) with `FailedRecordCount` and an error in each failed entry's slot.
 */
export const PutRecordsEntryError = {
  Throttled: "ProvisionedThroughputExceededException",
  InternalFailure: "InternalFailure",
} as const;
export type PutRecordsEntryError = (typeof PutRecordsEntryError)[keyof typeof PutRecordsEntryError];

/** Whether to fail an entry: `true` throttles it, an error code fails it with that code. */
export type EntryFault = boolean | PutRecordsEntryError;

export interface FaultProxyOptions {
  /** Answer this many GetRecords calls with ProvisionedThroughputExceededException first. */
  readonly throttleGetRecords?: number;
}

/**
 * An entry's failure as Kinesis writes it: the throttling message names the shard, stream and account,
 * InternalFailure's is "Internal service failure." (API reference, PutRecordsResultEntry). The proxy
 * does not route keys to shards, so its throttling message names the stream only.
 */
function entryFailure(code: PutRecordsEntryError, streamName: string) {
  return code === PutRecordsEntryError.Throttled
    ? {
        ErrorCode: code,
        ErrorMessage: `Rate exceeded for shard in stream ${streamName} under account 000000000000 (injected by the test fault proxy).`,
      }
    : { ErrorCode: code, ErrorMessage: "Internal service failure." };
}

/**
 * A loopback proxy in front of a Kinesis endpoint that fails chosen PutRecords entries the way Kinesis
 * does (a partial failure): the failed entries never reach the stream and come back with
 * ProvisionedThroughputExceededException (or InternalFailure) in their slot, counted in
 * FailedRecordCount; the rest are forwarded in one request and their real results are merged back in
 * order. It can also throttle the first GetRecords calls. Every
 * other call passes through untouched.
 */
export function startKinesisFaultProxy(
  upstream: string,
  reject: (entry: PutRecordsEntryView) => EntryFault,
  options: FaultProxyOptions = {},
): Promise<FaultProxy> {
  const stats = { putRecordsRequests: 0, rejectedEntries: 0, throttledGetRecords: 0 };
  return startAwsJsonProxy(upstream, AwsJsonContentType.V1_1, async (call) => {
    const contentType = String(call.request.headers["content-type"] ?? "");
    if (
      call.target === "Kinesis_20131202.GetRecords" &&
      stats.throttledGetRecords < (options.throttleGetRecords ?? 0)
    ) {
      stats.throttledGetRecords += 1;
      call.answerJson(400, {
        __type: "ProvisionedThroughputExceededException",
        message: "Rate exceeded (test fault proxy)",
      });
      return;
    }
    if (call.target !== "Kinesis_20131202.PutRecords") return call.pass();
    if (!contentType.includes("json")) {
      throw new Error(`the fault proxy reads JSON PutRecords only, got ${contentType}`);
    }
    stats.putRecordsRequests += 1;
    const parsed = JSON.parse(call.body.toString("utf8")) as {
      Records: { Data: string; PartitionKey: string }[];
      [other: string]: unknown;
    };
    const rejected: (PutRecordsEntryError | false)[] = parsed.Records.map((entry, position) => {
      const fault = reject({
        partitionKey: entry.PartitionKey,
        data: Buffer.from(entry.Data, "base64"),
        position,
        request: stats.putRecordsRequests,
      });
      return fault === true ? PutRecordsEntryError.Throttled : fault;
    });
    const streamName = String(parsed.StreamName ?? parsed.StreamARN ?? "");
    const kept = parsed.Records.filter((_, i) => !rejected[i]);
    let results: Record<string, unknown>[] = [];
    if (kept.length > 0) {
      const upstreamResponse = await call.forward(Buffer.from(JSON.stringify({ ...parsed, Records: kept })));
      const text = await upstreamResponse.text();
      if (!upstreamResponse.ok) return call.answer(upstreamResponse.status, text);
      results = (JSON.parse(text) as { Records: Record<string, unknown>[] }).Records;
    }
    let next = 0;
    const merged = rejected.map((fault) => (fault ? entryFailure(fault, streamName) : results[next++]));
    const failedCount = merged.filter((r) => r !== undefined && "ErrorCode" in r).length;
    stats.rejectedEntries += rejected.filter(Boolean).length;
    call.answerJson(200, { FailedRecordCount: failedCount, Records: merged });
  }).then((running) => ({ ...running, stats }));
}
