import type { S3Client } from "@aws-sdk/client-s3";
import { listQuarantine, type QuarantineEntry } from "@mcp-pipeline/recovery";
import { FailureCondition } from "../esm/kinesis/failure-record.js";

/** Why the processor's event source gave up on a record that is valid (§1.3): what a replay puts back. */
const GIVEN_UP: ReadonlySet<string> = new Set(Object.values(FailureCondition));

/**
 * The quarantined records the processor's event source gave up on, from one listing of the bucket (a
 * listing reads every object, so it is not done once per reason).
 */
export async function listGivenUp(s3: S3Client, bucket: string): Promise<QuarantineEntry[]> {
  return (await listQuarantine(s3, bucket)).filter((e) => GIVEN_UP.has(e.record.reason.code));
}
