import type { CreateTableCommandInput } from "@aws-sdk/client-dynamodb";
import { onDemandTable } from "@mcp-pipeline/aws";

/** TTL attribute of the dedupe table; Terraform's `ttl { attribute_name }` must match. */
export const DEDUPE_TTL_ATTRIBUTE = "expiresAt";

/** The dedupe table: partition key `id` (`<scope>#<key>`). */
export function dedupeTableDefinition(tableName: string): CreateTableCommandInput {
  return onDemandTable(tableName, "id");
}
