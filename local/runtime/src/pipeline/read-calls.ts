/** The tool-calls table's items for a list of calls. */
import { BatchGetItemCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";

/**
 * Reads the calls named into `calls` (by callId), 100 keys a BatchGetItem, consistently. A caller that
 * waits for calls reads only those it still waits for: a full Scan every round cost the emulator and this
 * process more CPU than the pipeline itself on larger runs (docs/benchmarks/local-pipeline.md).
 */
export async function readCalls(
  dynamodb: DynamoDBClient,
  table: string,
  calls: Map<string, Record<string, unknown>>,
  callIds: readonly string[],
): Promise<void> {
  for (let i = 0; i < callIds.length; i += 100) {
    let keys = callIds.slice(i, i + 100).map((callId) => ({ callId: { S: callId } }));
    while (keys.length > 0) {
      const page = await dynamodb.send(
        new BatchGetItemCommand({ RequestItems: { [table]: { Keys: keys, ConsistentRead: true } } }),
      );
      for (const item of page.Responses?.[table] ?? []) {
        const call = unmarshall(item);
        calls.set(String(call.callId), call);
      }
      keys = (page.UnprocessedKeys?.[table]?.Keys ?? []) as typeof keys;
    }
  }
}
