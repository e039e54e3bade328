/**
 * The doors: loopback proxies in front of the DynamoDB and S3 emulators through which every function
 * (and nothing of the ledger's) reaches them. They inject the plan's faults while faults are on, and they
 * see each write the emulator accepted: the effects the ledger counts, where they happen.
 */
import { createServer } from "node:http";
import {
  AwsJsonContentType,
  answerWith,
  exchange,
  listenOnLoopback,
  type ProxiedCall,
  type RunningEmulator,
  readBody,
  startAwsJsonProxy,
  type UpstreamAnswer,
} from "@mcp-pipeline/emulators";
import type { FaultPlan } from "./plan.js";

/**
 * A tool-call item as a write put it in the table (the processor's or a worker's): the effect itself, not
 * what a function says it did. Versions order a call's writes: each accepted write is conditional on the
 * version it read, so the versions of one call's accepted writes are distinct and grow.
 */
export interface CallWrite {
  readonly callId: string;
  readonly version: number;
  /** The item's `recentEventIds`: the events folded into it, in the order they were folded. */
  readonly eventIds: readonly string[];
  readonly status: string;
  readonly statusEventId: string;
  /** The token of the worker's claim registered on the item, if any (docs/idempotency.md "Fencing outcomes by the claim"). */
  readonly claimToken?: string;
}

/** A write an emulator accepted that the ledger counts: a tool-call item, or a quarantined record. */
export type Effect =
  | { readonly kind: "call-write"; readonly write: CallWrite }
  | {
      readonly kind: "quarantined";
      readonly sequenceNumber: string;
      /** The record's bytes the object holds (its `data`, base64). */
      readonly data: string;
    };

/** A fault a door injected into a request that named these calls (in its keys, item or object key). */
export interface FaultTouch {
  readonly callIds: readonly string[];
  readonly at: number;
  readonly what: "dynamodb" | "dynamodb-after-write" | "s3";
}

/**
 * A failure the door did not inject but saw happen to a request that named these calls: the exchange with
 * the emulator failed (a connection reset or refused), or the emulator answered 5xx. It happened to the
 * job's request as surely as an injected fault, and a rerun it caused must be explained by it, not left
 * "without cause"; so it is recorded, never hidden in a retry.
 */
export interface EmulatorErrorTouch {
  readonly callIds: readonly string[];
  readonly at: number;
  readonly what: "dynamodb" | "s3";
  /** The emulator's 5xx status, or undefined when the exchange itself failed. */
  readonly status: number | undefined;
}

export interface DoorOptions {
  readonly plan: FaultPlan;
  readonly active: () => boolean;
  readonly onEffect: (effect: Effect) => void;
  /** Each injected fault, with the calls its request named (`callIdsIn` of the request). */
  readonly onFault?: (touch: FaultTouch) => void;
  /** Each failure of the emulator behind the door, with the calls its request named. */
  readonly onEmulatorError?: (touch: EmulatorErrorTouch) => void;
  /** The call ids a request's text names (the workload knows the shape of its own ids). */
  readonly callIdsIn?: (text: string) => readonly string[];
  readonly toolCallsTable: string;
  readonly quarantineBucket: string;
}

export interface DoorCounts {
  dynamodbFaults: number;
  dynamodbAfterWriteFaults: number;
  s3Faults: number;
  /** Failures of the emulators behind the doors, not injected: exchanges that failed, 5xx answers. */
  emulatorErrors: number;
}

/**
 * Exchanges a request with the emulator behind a door, recording a failure of the exchange or a 5xx
 * answer as an emulator error of the calls `text` names; the failure itself goes on to the caller.
 */
async function exchangeRecorded(
  options: DoorOptions,
  counts: DoorCounts,
  what: EmulatorErrorTouch["what"],
  text: () => string,
  send: () => Promise<UpstreamAnswer>,
): Promise<UpstreamAnswer> {
  const record = (status: number | undefined) => {
    counts.emulatorErrors += 1;
    options.onEmulatorError?.({ callIds: options.callIdsIn?.(text()) ?? [], at: Date.now(), what, status });
  };
  let answer: UpstreamAnswer;
  try {
    answer = await send();
  } catch (error) {
    record(undefined);
    throw error;
  }
  if (answer.status >= 500) record(answer.status);
  return answer;
}

const DYNAMODB = "DynamoDB_20120810.";

type AttributeValue = {
  readonly S?: string;
  readonly N?: string;
  readonly L?: readonly AttributeValue[];
  readonly M?: Record<string, AttributeValue>;
};
type Item = Record<string, AttributeValue>;

interface WriteBody {
  readonly TableName?: string;
  readonly Item?: Item;
  readonly TransactItems?: readonly {
    readonly Put?: { readonly TableName?: string; readonly Item?: Item };
  }[];
}

function callWriteOf(item: Item): CallWrite | undefined {
  const callId = item.callId?.S;
  const version = Number(item.version?.N);
  if (!callId || !Number.isInteger(version)) return undefined;
  return {
    callId,
    version,
    eventIds: (item.recentEventIds?.L ?? []).flatMap((v) => (v.S ? [v.S] : [])),
    status: item.status?.S ?? "",
    statusEventId: item.statusEvent?.M?.eventId?.S ?? "",
    ...(item.claim?.M?.token?.S ? { claimToken: item.claim.M.token.S } : {}),
  };
}

/** The tool-call items a DynamoDB write puts (PutItem, or the Puts of TransactWriteItems), if any. */
export function callWritesOf(target: string, body: string, toolCallsTable: string): CallWrite[] {
  if (target !== `${DYNAMODB}PutItem` && target !== `${DYNAMODB}TransactWriteItems`) return [];
  const write = JSON.parse(body) as WriteBody;
  const puts = target.endsWith("PutItem")
    ? [{ TableName: write.TableName, Item: write.Item }]
    : (write.TransactItems ?? []).map((t) => t.Put ?? {});
  return puts.flatMap((put) => {
    if (put.TableName !== toolCallsTable || !put.Item) return [];
    const written = callWriteOf(put.Item);
    return written ? [written] : [];
  });
}

/** What the DynamoDB door does with each request (startDynamoDbDoor serves it on a loopback port). */
export function dynamoDbDoor(options: DoorOptions, counts: DoorCounts): (call: ProxiedCall) => Promise<void> {
  const { plan, active } = options;
  const touched = (what: FaultTouch["what"], text: string) =>
    options.onFault?.({ callIds: options.callIdsIn?.(text) ?? [], at: Date.now(), what });
  return async (call) => {
    if (active() && plan.draw("dynamodb")) {
      counts.dynamodbFaults += 1;
      touched("dynamodb", call.body.toString("utf8"));
      // Both are retryable: DynamoDB throttles with a 400 and fails with a 500 (the SDK retries both).
      if (counts.dynamodbFaults % 2 === 0)
        return call.answerJson(400, {
          __type: "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
          message: "Throughput exceeded (injected by npm run chaos)",
        });
      return call.answerJson(500, {
        __type: "com.amazonaws.dynamodb.v20120810#InternalServerError",
        message: "Internal server error (injected by npm run chaos)",
      });
    }
    const upstreamAnswer = await exchangeRecorded(
      options,
      counts,
      "dynamodb",
      () => call.body.toString("utf8"),
      () => call.exchange(),
    );
    if (upstreamAnswer.status === 200) {
      const body = call.body.toString("utf8");
      const writes = callWritesOf(call.target, body, options.toolCallsTable);
      for (const write of writes) options.onEffect({ kind: "call-write", write });
      if (
        call.target.endsWith("PutItem") ||
        call.target.endsWith("UpdateItem") ||
        call.target.endsWith("DeleteItem") ||
        call.target.endsWith("TransactWriteItems")
      ) {
        if (active() && plan.draw("dynamodbAfterWrite")) {
          // The write is done, the answer says it failed: what a 500 from DynamoDB may mean. The caller
          // retries; its condition (version read, claim held) must keep the effect single.
          counts.dynamodbAfterWriteFaults += 1;
          touched("dynamodb-after-write", body);
          return call.answerJson(500, {
            __type: "com.amazonaws.dynamodb.v20120810#InternalServerError",
            message: "Internal server error after the write (injected by npm run chaos)",
          });
        }
      }
    }
    answerWith(call.response, upstreamAnswer);
  };
}

export function startDynamoDbDoor(
  upstream: string,
  options: DoorOptions,
  counts: DoorCounts,
): Promise<RunningEmulator> {
  return startAwsJsonProxy(upstream, AwsJsonContentType.V1_0, dynamoDbDoor(options, counts));
}

/** `/<bucket>/<key>` (the clients use path-style addressing against a local endpoint). */
function bucketAndKey(url: string): { bucket: string; key: string } {
  const path = decodeURIComponent((url.split("?")[0] ?? "").slice(1));
  const slash = path.indexOf("/");
  return slash < 0 ? { bucket: path, key: "" } : { bucket: path.slice(0, slash), key: path.slice(slash + 1) };
}

/** The `data` (the record's bytes, base64) of a quarantine object's body, if it is one. */
function dataOf(body: Buffer): string | undefined {
  try {
    const data = (JSON.parse(body.toString("utf8")) as { data?: unknown }).data;
    return typeof data === "string" ? data : undefined;
  } catch {
    return undefined;
  }
}

/** S3 speaks REST with XML errors, not AWS JSON: its own small proxy. */
export function startS3Door(
  upstream: string,
  options: DoorOptions,
  counts: DoorCounts,
): Promise<RunningEmulator> {
  const server = createServer(async (request, response) => {
    try {
      const body = await readBody(request);
      if (options.active() && options.plan.draw("s3")) {
        counts.s3Faults += 1;
        options.onFault?.({
          callIds: options.callIdsIn?.(decodeURIComponent(request.url ?? "")) ?? [],
          at: Date.now(),
          what: "s3",
        });
        const [status, code] = counts.s3Faults % 2 === 0 ? [503, "SlowDown"] : [500, "InternalError"];
        response.writeHead(status, { "content-type": "application/xml" });
        response.end(
          `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected by npm run chaos</Message></Error>`,
        );
        return;
      }
      const answer = await exchangeRecorded(
        options,
        counts,
        "s3",
        () => decodeURIComponent(request.url ?? ""),
        () => exchange(upstream, request, body),
      );
      if (answer.status === 200 && request.method === "PUT") {
        const { bucket, key } = bucketAndKey(request.url ?? "/");
        // A quarantine object, under kinesis/ (a replay's mark, PutObjectTagging, puts no record: it has no
        // `data`; a replay's journal, under replays/, names records already counted).
        const data =
          bucket === options.quarantineBucket && key.startsWith("kinesis/") && key.endsWith(".json")
            ? dataOf(body)
            : undefined;
        if (data !== undefined)
          options.onEffect({
            kind: "quarantined",
            sequenceNumber: key.slice(key.lastIndexOf("/") + 1, -".json".length),
            data,
          });
      }
      answerWith(response, answer);
    } catch (error) {
      if (!response.headersSent) {
        response.writeHead(500, { "content-type": "application/xml" });
        response.end(`<Error><Code>InternalError</Code><Message>${String(error)}</Message></Error>`);
      }
    }
  });
  return listenOnLoopback(server);
}
