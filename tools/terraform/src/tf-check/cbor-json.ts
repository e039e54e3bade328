/**
 * CloudWatch over Smithy RPC v2 CBOR, translated to and from the awsJson1_0 protocol that moto's server
 * answers. Recent AWS SDKs (Go v2 in the hashicorp/aws provider, JavaScript v3) speak CBOR to CloudWatch;
 * moto 5.2.5 parses only the JSON and query protocols. Pure functions: the proxy owns the sockets.
 *
 * Timestamps are CBOR tag 1 (epoch seconds) in RPC v2 CBOR and plain epoch seconds in JSON; which members
 * are timestamps comes from CloudWatch's model (botocore's cloudwatch/2010-08-01/service-2.json: every
 * member whose shape is a timestamp, and the one list of timestamps).
 */
import { cbor, tag } from "@smithy/core/cbor";

export const CLOUDWATCH_TARGET_PREFIX = "GraniteServiceVersion20100801";

const TIMESTAMP_MEMBERS = new Set([
  "AlarmConfigurationUpdatedTimestamp",
  "CreatedAt",
  "CreationDate",
  "EndDate",
  "EndTime",
  "ExpireDate",
  "LastModified",
  "LastUpdateDate",
  "LastUpdatedTimestamp",
  "StartDate",
  "StartTime",
  "StateTransitionedTimestamp",
  "StateUpdatedTimestamp",
  "Timestamp",
]);
const TIMESTAMP_LIST_MEMBERS = new Set(["Timestamps"]);

/** `/service/<ServiceShape>/operation/<Operation>`, the RPC v2 request path; null for any other path. */
export function rpcV2Operation(path: string): { service: string; operation: string } | null {
  const match = /^\/service\/([^/]+)\/operation\/([^/?]+)$/.exec(path.split("?")[0] ?? "");
  return match ? { service: match[1] as string, operation: match[2] as string } : null;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isTag(value: unknown): value is { tag: number | bigint; value: unknown } {
  return typeof value === "object" && value !== null && "tag" in value && "value" in value;
}

/** A decoded CBOR value as the JSON protocol spells it: tag-1 timestamps to epoch seconds, blobs to base64. */
export function cborValueToJson(value: unknown): Json {
  if (value === undefined || value === null) return null;
  if (typeof value === "bigint") return Number(value);
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (value instanceof Date) return value.getTime() / 1000;
  if (isTag(value)) return cborValueToJson(value.value);
  if (Array.isArray(value)) return value.map(cborValueToJson);
  if (typeof value === "object") {
    const out: Record<string, Json> = {};
    for (const [key, v] of Object.entries(value)) if (v !== undefined) out[key] = cborValueToJson(v);
    return out;
  }
  return value as Json;
}

const epochSeconds = (value: Json): number =>
  typeof value === "number" ? value : Date.parse(String(value)) / 1000;

/** A JSON protocol value as RPC v2 CBOR carries it: timestamp members as tag 1. */
export function jsonValueToCbor(value: Json, member?: string): unknown {
  if (value === null) return undefined;
  if (member !== undefined && TIMESTAMP_MEMBERS.has(member) && !Array.isArray(value))
    return tag({ tag: 1, value: epochSeconds(value) });
  if (Array.isArray(value)) {
    if (member !== undefined && TIMESTAMP_LIST_MEMBERS.has(member))
      return value.map((v) => tag({ tag: 1, value: epochSeconds(v) }));
    return value.map((v) => jsonValueToCbor(v));
  }
  if (typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      const converted = jsonValueToCbor(v, key);
      if (converted !== undefined) out[key] = converted;
    }
    return out;
  }
  return value;
}

/** The JSON request body for a CBOR request body (an empty body is an empty input). */
export function cborRequestToJson(body: Uint8Array): string {
  if (body.byteLength === 0) return "{}";
  return JSON.stringify(cborValueToJson(cbor.deserialize(body)));
}

/**
 * The CBOR response body for moto's JSON response. Errors keep their `__type` (the code the SDKs read)
 * without the JSON protocol's namespace prefix, and their message.
 */
export function jsonResponseToCbor(body: string): Uint8Array {
  const parsed = (body.trim() === "" ? {} : JSON.parse(body)) as Json;
  if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) && "__type" in parsed) {
    const code = String(parsed.__type).split("#").pop() ?? "";
    const message = parsed.message ?? parsed.Message ?? "";
    return cbor.serialize({ __type: code, message });
  }
  return cbor.serialize(jsonValueToCbor(parsed));
}
