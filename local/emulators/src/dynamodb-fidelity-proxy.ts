import { crc32 } from "node:zlib";
import type { DynamoDbDelays } from "./dynamodb-server.mjs";
import { startDynamoDb } from "./embedded.js";
import type { RunningEmulator } from "./loopback.js";
import { AwsJsonContentType, behindProxy, callAwsJson, relay, startAwsJsonProxy } from "./proxy.js";

/**
 * What DynamoDB answers and dynalite does not, in one place.
 *
 * PutItem, UpdateItem and DeleteItem accept `ReturnValuesOnConditionCheckFailure` (NONE | ALL_OLD): "an
 * optional parameter that returns the item attributes for a ... operation that failed a condition
 * check". With ALL_OLD, DynamoDB's `ConditionalCheckFailedException` carries `Item`, "Item which caused
 * the ConditionalCheckFailedException", as an AttributeValue map (DynamoDB JSON), beside `message` ("The
 * conditional request failed"). When no item exists (the condition failed on an absent item) there is
 * nothing to return and the error has no `Item`. Sources (AWS's service model, as the API reference and
 * the SDKs generated from it state it):
 * - https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_PutItem.html (and API_UpdateItem,
 *   API_DeleteItem, API_Put): request parameter ReturnValuesOnConditionCheckFailure;
 * - https://docs.aws.amazon.com/sdk-for-kotlin/api/latest/dynamodb/aws.sdk.kotlin.services.dynamodb.model/-delete-item-request/return-values-on-condition-check-failure.html
 * - https://docs.aws.amazon.com/botocore/latest/reference/services/dynamodb/client/exceptions/ConditionalCheckFailedException.html
 *   (the error's shape: `{ message, Item: { <name>: { S | N | B | SS | NS | BS | M | L | NULL | BOOL } } }`).
 * dynalite 4 never returns `Item` (architect/dynalite issue #182, open).
 */
const CONDITIONAL_WRITES = new Set([
  "DynamoDB_20120810.PutItem",
  "DynamoDB_20120810.UpdateItem",
  "DynamoDB_20120810.DeleteItem",
]);
const CONDITIONAL_CHECK_FAILED = "ConditionalCheckFailedException";

type AttributeMap = Record<string, unknown>;

interface ConditionalWrite {
  readonly TableName: string;
  readonly Key?: AttributeMap;
  readonly Item?: AttributeMap;
  readonly ReturnValuesOnConditionCheckFailure?: string;
}

export interface DynamoDbFidelityProxy extends RunningEmulator {
  /** Conditional-check failures seen, and how many of them the proxy completed with `Item`. */
  readonly stats: { conditionalCheckFailures: number; itemsReturned: number };
}

/** One call to the upstream on the proxy's own behalf. */
async function callUpstream(
  upstream: string,
  operation: string,
  payload: object,
): Promise<Record<string, unknown>> {
  const response = await callAwsJson(
    upstream,
    { target: `DynamoDB_20120810.${operation}`, contentType: AwsJsonContentType.V1_0, service: "dynamodb" },
    payload,
  );
  const parsed = (await response.json()) as Record<string, unknown>;
  if (!response.ok)
    throw new Error(`${operation} on the upstream answered ${response.status}: ${parsed.message}`);
  return parsed;
}

/**
 * A loopback proxy in front of a DynamoDB endpoint (dynalite) that answers as DynamoDB does where the
 * emulator is kinder (see above): a conditional write that asked for `ALL_OLD` and failed its
 * condition gets the blocking item back in the error, in DynamoDB JSON, read with a consistent
 * GetItem right after the failure. Every other request and answer passes through untouched.
 *
 * The item is read after the failed write, not atomically with it: a write by someone else in
 * between would show up, which DynamoDB would not do. Tests that race writers on one key must not
 * depend on which of the two items they see.
 */
export function startDynamoDbFidelityProxy(upstream: string): Promise<DynamoDbFidelityProxy> {
  const stats = { conditionalCheckFailures: 0, itemsReturned: 0 };
  const keySchemas = new Map<string, readonly string[]>();

  const keyAttributes = async (table: string): Promise<readonly string[]> => {
    const known = keySchemas.get(table);
    if (known) return known;
    const described = (await callUpstream(upstream, "DescribeTable", { TableName: table })) as {
      Table: { KeySchema: { AttributeName: string }[] };
    };
    const names = described.Table.KeySchema.map((k) => k.AttributeName);
    keySchemas.set(table, names);
    return names;
  };

  const keyOf = async (write: ConditionalWrite): Promise<AttributeMap> => {
    if (write.Key) return write.Key;
    const item = write.Item ?? {};
    return Object.fromEntries((await keyAttributes(write.TableName)).map((name) => [name, item[name]]));
  };

  return startAwsJsonProxy(upstream, AwsJsonContentType.V1_0, async (call) => {
    const upstreamResponse = await call.forward();
    if (!CONDITIONAL_WRITES.has(call.target) || upstreamResponse.status !== 400) {
      await relay(call.response, upstreamResponse);
      return;
    }
    const text = await upstreamResponse.text();
    const error = JSON.parse(text) as { __type?: string; Item?: AttributeMap };
    const write = JSON.parse(call.body.toString("utf8")) as ConditionalWrite;
    let answer = text;
    if (String(error.__type).endsWith(`#${CONDITIONAL_CHECK_FAILED}`)) {
      stats.conditionalCheckFailures += 1;
      if (write.ReturnValuesOnConditionCheckFailure === "ALL_OLD" && error.Item === undefined) {
        const found = (await callUpstream(upstream, "GetItem", {
          TableName: write.TableName,
          Key: await keyOf(write),
          ConsistentRead: true,
        })) as { Item?: AttributeMap };
        if (found.Item !== undefined) {
          stats.itemsReturned += 1;
          answer = JSON.stringify({ ...error, Item: found.Item });
        }
      }
    }
    const headers: Record<string, string> = {};
    upstreamResponse.headers.forEach((value, name) => {
      if (!["content-length", "transfer-encoding", "content-encoding", "x-amz-crc32"].includes(name))
        headers[name] = value;
    });
    const bytes = Buffer.from(answer, "utf8");
    // DynamoDB signs every answer's body with its CRC32; keep that true of the rewritten one.
    headers["x-amz-crc32"] = String(crc32(bytes));
    call.response.writeHead(upstreamResponse.status, headers);
    call.response.end(bytes);
  }).then((running) => ({ ...running, stats }));
}

/**
 * dynalite behind the fidelity proxy: a DynamoDB that answers conditional-check failures as AWS does.
 * Stopping it stops both.
 */
export async function startFaithfulDynamoDb(delays: DynamoDbDelays = {}): Promise<DynamoDbFidelityProxy> {
  return behindProxy(await startDynamoDb(delays), startDynamoDbFidelityProxy);
}
