import { randomUUID } from "node:crypto";
import type { S3Client } from "@aws-sdk/client-s3";
import type { LazyClient, RequestOptions } from "@mcp-pipeline/aws";
import type { ResultLocation } from "@mcp-pipeline/contracts";

export interface PlacedResult {
  readonly location: ResultLocation;
  /** The JSON text to keep in the table item; absent when the result went to S3. */
  readonly output?: string;
  readonly sizeBytes: number;
}

/**
 * One object per run of a call: `results/<callId>/<runId>.json`. A run never writes where another run
 * wrote, so a stored result is never overwritten: when two runs of one call happen (a lease that ran
 * out under a slow tool, a crash between the S3 write and the table write), the table keeps the first
 * outcome and its pointer still resolves to that run's bytes. The losing run's object is left
 * unreferenced (docs/tool-workers.md).
 */
export function resultKeyFor(callId: string, runId: string): string {
  return `results/${encodeURIComponent(callId)}/${encodeURIComponent(runId)}.json`;
}

/**
 * Keeps a result inline when it fits `inlineMaxBytes`, otherwise writes it to S3 under this run's own
 * key and returns the pointer. The S3 write completes before the call is marked completed, so a
 * completed call's pointer always resolves. `s3` may be a client built on first use (lazyS3Client): a
 * worker whose results all fit inline never loads the S3 client. An aborted write (`options.signal`) may
 * still have stored its object: the key is this run's own, so at worst it is left unreferenced.
 */
export async function placeResult(
  s3: S3Client | LazyClient<S3Client>,
  bucket: string,
  callId: string,
  json: string,
  inlineMaxBytes: number,
  options: RequestOptions & { readonly runId?: string } = {},
): Promise<PlacedResult> {
  const sizeBytes = Buffer.byteLength(json, "utf8");
  if (sizeBytes <= inlineMaxBytes) return { location: { kind: "inline" }, output: json, sizeBytes };
  const key = resultKeyFor(callId, options.runId ?? randomUUID());
  const [{ putResultObject }, client] = await Promise.all([
    import("./result-object.js"),
    typeof s3 === "function" ? s3() : s3,
  ]);
  await putResultObject(client, bucket, key, json, options);
  return { location: { kind: "s3", bucket, key }, sizeBytes };
}
