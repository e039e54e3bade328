/**
 * The doors: loopback proxies in front of the DynamoDB and S3 emulators through which every function
 * (and nothing of the ledger's) reaches them. They inject the plan's faults while faults are on, and they
 * see each write the emulator accepted: the effects the ledger counts, where they happen.
 */
import { createServer, type IncomingMessage } from "node:http";
import {
  AwsJsonContentType,
  listenOnLoopback,
  type RunningEmulator,
  readBody,
  relay,
  startAwsJsonProxy,
} from "@mcp-pipeline/emulators";
import { RecordStatus } from "@mcp-pipeline/idempotency";
import type { FaultPlan } from "./plan.js";

/** A write an emulator accepted: a call's state (processor) or a job's completion (workers). */
export type Effect =
  | { readonly kind: "call-state"; readonly callId: string }
  | { readonly kind: "job-completed"; readonly callId: string }
  | { readonly kind: "quarantined"; readonly sequenceNumber: string };

export interface DoorOptions {
  readonly plan: FaultPlan;
  readonly active: () => boolean;
  readonly onEffect: (effect: Effect) => void;
  readonly toolCallsTable: string;
  readonly dedupeTable: string;
  readonly quarantineBucket: string;
}

export interface DoorCounts {
  dynamodbFaults: number;
  dynamodbAfterWriteFaults: number;
  s3Faults: number;
}

const DYNAMODB = "DynamoDB_20120810.";

interface WriteBody {
  readonly TableName?: string;
  readonly Item?: { readonly callId?: { readonly S?: string } };
  readonly Key?: { readonly id?: { readonly S?: string } };
  readonly ExpressionAttributeValues?: Record<string, { readonly S?: string }>;
}

/** The effect a DynamoDB write stands for, if it is one the ledger counts. */
export function effectOfWrite(
  target: string,
  body: string,
  tables: Pick<DoorOptions, "toolCallsTable" | "dedupeTable">,
): Effect | undefined {
  if (target !== `${DYNAMODB}PutItem` && target !== `${DYNAMODB}UpdateItem`) return undefined;
  const write = JSON.parse(body) as WriteBody;
  if (target.endsWith("PutItem") && write.TableName === tables.toolCallsTable) {
    const callId = write.Item?.callId?.S;
    return callId ? { kind: "call-state", callId } : undefined;
  }
  // The idempotency store's complete(): conditional on the claim, so it succeeds once per key
  // (packages/idempotency); the key is `<scope>#<callId>`.
  if (
    target.endsWith("UpdateItem") &&
    write.TableName === tables.dedupeTable &&
    write.ExpressionAttributeValues?.[":completed"]?.S === RecordStatus.Completed
  ) {
    const id = write.Key?.id?.S ?? "";
    return { kind: "job-completed", callId: id.slice(id.lastIndexOf("#") + 1) };
  }
  return undefined;
}

export async function startDynamoDbDoor(
  upstream: string,
  options: DoorOptions,
  counts: DoorCounts,
): Promise<RunningEmulator> {
  const { plan, active } = options;
  return startAwsJsonProxy(upstream, AwsJsonContentType.V1_0, async (call) => {
    if (active() && plan.draw("dynamodb")) {
      counts.dynamodbFaults += 1;
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
    const upstreamAnswer = await call.forward();
    const text = await upstreamAnswer.text();
    if (upstreamAnswer.status === 200) {
      const effect = effectOfWrite(call.target, call.body.toString("utf8"), options);
      if (effect) {
        options.onEffect(effect);
        if (active() && plan.draw("dynamodbAfterWrite")) {
          // The write is done, the answer says it failed: what a 500 from DynamoDB may mean. The caller
          // retries; its condition (version read, claim held) must keep the effect single.
          counts.dynamodbAfterWriteFaults += 1;
          return call.answerJson(500, {
            __type: "com.amazonaws.dynamodb.v20120810#InternalServerError",
            message: "Internal server error after the write (injected by npm run chaos)",
          });
        }
      }
    }
    call.answer(upstreamAnswer.status, text);
  });
}

/** `/<bucket>/<key>` (the clients use path-style addressing against a local endpoint). */
function bucketAndKey(url: string): { bucket: string; key: string } {
  const path = decodeURIComponent((url.split("?")[0] ?? "").slice(1));
  const slash = path.indexOf("/");
  return slash < 0 ? { bucket: path, key: "" } : { bucket: path.slice(0, slash), key: path.slice(slash + 1) };
}

/** Like the emulators' `forward`, which serves POST-only JSON protocols: GET and HEAD carry no body. */
function forwardRest(upstream: string, request: IncomingMessage, body: Buffer): Promise<Response> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers))
    if (typeof value === "string" && name !== "host" && name !== "content-length") headers[name] = value;
  const method = request.method ?? "GET";
  return fetch(`${upstream}${request.url ?? "/"}`, {
    method,
    headers,
    ...(method === "GET" || method === "HEAD" ? {} : { body: new Uint8Array(body) }),
  });
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
        const [status, code] = counts.s3Faults % 2 === 0 ? [503, "SlowDown"] : [500, "InternalError"];
        response.writeHead(status, { "content-type": "application/xml" });
        response.end(
          `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected by npm run chaos</Message></Error>`,
        );
        return;
      }
      const answer = await forwardRest(upstream, request, body);
      if (answer.status === 200 && request.method === "PUT") {
        const { bucket, key } = bucketAndKey(request.url ?? "/");
        if (bucket === options.quarantineBucket && key.endsWith(".json")) {
          options.onEffect({
            kind: "quarantined",
            sequenceNumber: key.slice(key.lastIndexOf("/") + 1, -".json".length),
          });
        }
      }
      await relay(response, answer);
    } catch (error) {
      if (!response.headersSent) {
        response.writeHead(500, { "content-type": "application/xml" });
        response.end(`<Error><Code>InternalError</Code><Message>${String(error)}</Message></Error>`);
      }
    }
  });
  return listenOnLoopback(server);
}
