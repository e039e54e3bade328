/**
 * The end state, read round the doors after the pipeline stopped: every item of the tool-calls table
 * (what the oracle judges), each finished job's stored result (its inline output, or the S3 object its
 * item points to), and the quarantine's keys.
 */
import { type DynamoDBClient, ScanCommand } from "@aws-sdk/client-dynamodb";
import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { LocalPipeline } from "@mcp-pipeline/local-runtime";
import { storedQuarantineKeys } from "@mcp-pipeline/recovery";
import type { TableItem } from "./oracle.js";
import type { FinalState } from "./verdict.js";

async function storedResult(s3: S3Client, item: TableItem): Promise<string | undefined> {
  if (item.output !== undefined) return item.output;
  const location = item.result?.location;
  if (location?.kind !== "s3" || !location.bucket || !location.key) return undefined;
  const object = await s3.send(new GetObjectCommand({ Bucket: location.bucket, Key: location.key }));
  return object.Body?.transformToString();
}

export async function readFinalState(
  dynamodb: DynamoDBClient,
  s3: S3Client,
  pipeline: LocalPipeline,
): Promise<FinalState> {
  const items = new Map<string, TableItem>();
  let start: Record<string, never> | undefined;
  do {
    const page = await dynamodb.send(
      new ScanCommand({
        TableName: pipeline.names.toolCallsTable,
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const raw of page.Items ?? []) {
      const item = unmarshall(raw) as TableItem;
      items.set(item.callId, item);
    }
    start = page.LastEvaluatedKey as Record<string, never> | undefined;
  } while (start);
  const results = new Map<string, string>();
  for (const item of items.values()) {
    if (item.status !== "completed") continue;
    const text = await storedResult(s3, item);
    if (text !== undefined) results.set(item.callId, text);
  }
  // Records only: a replay's journals (replays/) name records, they are none.
  const keys = await storedQuarantineKeys(s3, pipeline.names.quarantineBucket, "kinesis/");
  const quarantined = new Set(
    [...keys].map((key) => key.slice(key.lastIndexOf("/") + 1).replace(/\.json$/, "")),
  );
  return { items, results, quarantined };
}
