import type { CreateTableCommandInput } from "@aws-sdk/client-dynamodb";

/**
 * An on-demand table keyed by one string partition key: the shape of every table in this project.
 * The local runtime and tests create tables from these definitions; terraform/modules mirror them.
 */
export function onDemandTable(tableName: string, partitionKey: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: [{ AttributeName: partitionKey, AttributeType: "S" }],
    KeySchema: [{ AttributeName: partitionKey, KeyType: "HASH" }],
  };
}
