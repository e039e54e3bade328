import type { ShardRecord } from "./event.js";

export const FailureCondition = {
  RetryAttemptsExhausted: "RetryAttemptsExhausted",
  RecordAgeExceeded: "RecordAgeExceeded",
} as const;
export type FailureCondition = (typeof FailureCondition)[keyof typeof FailureCondition];

/** The on-failure record Lambda sends to an SQS or SNS destination (docs/aws-semantics.md §1.6): metadata only. */
export interface KinesisFailureRecord {
  readonly requestContext: {
    readonly requestId: string;
    readonly functionArn: string;
    readonly condition: FailureCondition;
    readonly approximateInvokeCount: number;
  };
  /** Absent for RecordAgeExceeded (AWS-recorded). */
  readonly responseContext?: {
    readonly statusCode: 200;
    readonly executedVersion: "$LATEST";
    /** "Unhandled" after a function error; null when records were reported through batchItemFailures. */
    readonly functionError: "Unhandled" | null;
  };
  readonly version: "1.0";
  readonly timestamp: string;
  readonly KinesisBatchInfo: {
    readonly shardId: string;
    readonly startSequenceNumber: string;
    readonly endSequenceNumber: string;
    readonly approximateArrivalOfFirstRecord: string;
    readonly approximateArrivalOfLastRecord: string;
    readonly batchSize: number;
    readonly streamArn: string;
  };
}

export function failureRecord(options: {
  readonly records: readonly ShardRecord[];
  readonly shardId: string;
  readonly streamArn: string;
  readonly functionArn: string;
  readonly requestId: string;
  readonly condition: FailureCondition;
  readonly invokeCount: number;
  readonly functionError?: "Unhandled" | null;
  readonly now: number;
}): KinesisFailureRecord {
  const first = options.records[0];
  const last = options.records.at(-1);
  if (!first || !last) throw new RangeError("an on-failure record needs at least one record");
  return {
    requestContext: {
      requestId: options.requestId,
      functionArn: options.functionArn,
      condition: options.condition,
      approximateInvokeCount: options.invokeCount,
    },
    ...(options.condition === FailureCondition.RecordAgeExceeded
      ? {}
      : {
          responseContext: {
            statusCode: 200 as const,
            executedVersion: "$LATEST" as const,
            functionError: options.functionError ?? null,
          },
        }),
    version: "1.0",
    timestamp: new Date(options.now).toISOString(),
    KinesisBatchInfo: {
      shardId: options.shardId,
      startSequenceNumber: first.sequenceNumber,
      endSequenceNumber: last.sequenceNumber,
      approximateArrivalOfFirstRecord: new Date(first.arrivalMs).toISOString(),
      approximateArrivalOfLastRecord: new Date(last.arrivalMs).toISOString(),
      batchSize: options.records.length,
      streamArn: options.streamArn,
    },
  };
}
