import type { CreateTableCommandInput, UpdateTimeToLiveCommandInput } from "@aws-sdk/client-dynamodb";
import { onDemandTable } from "@mcp-pipeline/aws";
import type { IdempotencyRecord } from "./record.js";

/** The dedupe table: partition key `id` (`<scope>#<key>`). */
export function dedupeTableDefinition(tableName: string): CreateTableCommandInput {
  return onDemandTable(tableName, "id");
}

/**
 * TTL on the record's `expiresAt` (epoch seconds), so DynamoDB deletes rows that no longer decide
 * anything; expiry itself is checked in code (`isLive`), since TTL deletes late. CreateTable cannot
 * set TTL: it is this second call. Terraform's `ttl { attribute_name }` must name the same field.
 */
export function dedupeTimeToLive(tableName: string): UpdateTimeToLiveCommandInput {
  return {
    TableName: tableName,
    TimeToLiveSpecification: { AttributeName: "expiresAt" satisfies keyof IdempotencyRecord, Enabled: true },
  };
}
