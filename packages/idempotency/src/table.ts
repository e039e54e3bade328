import type { CreateTableCommandInput } from "@aws-sdk/client-dynamodb";

/** TTL attribute of the dedupe table; Terraform's `ttl { attribute_name }` must match. */
export const DEDUPE_TTL_ATTRIBUTE = "expiresAt";

/** The dedupe table as the local runtime and tests create it; terraform/modules mirror it. */
export function dedupeTableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" }],
    KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
  };
}
