export const RecordStatus = {
  InProgress: "IN_PROGRESS",
  Completed: "COMPLETED",
} as const;
export type RecordStatus = (typeof RecordStatus)[keyof typeof RecordStatus];

/** One row of the dedupe table. `expiresAt` is the table's TTL attribute (epoch seconds). */
export interface IdempotencyRecord {
  readonly id: string;
  readonly status: RecordStatus;
  /** Epoch ms; only meaningful while IN_PROGRESS. */
  readonly leaseExpiresAt: number;
  readonly claimToken: string;
  readonly expiresAt: number;
  readonly completedAt?: string;
}

/**
 * Whether a row still decides anything at `nowMs`. DynamoDB's TTL deletes expired items up to days
 * late, so expiry is checked here rather than trusted to TTL.
 */
export function isLive(record: IdempotencyRecord, nowMs: number): boolean {
  if (record.expiresAt * 1000 <= nowMs) return false;
  if (record.status === RecordStatus.InProgress) return record.leaseExpiresAt > nowMs;
  return true;
}

export function isCompleted(record: IdempotencyRecord | undefined, nowMs: number): boolean {
  return record !== undefined && record.status === RecordStatus.Completed && isLive(record, nowMs);
}
