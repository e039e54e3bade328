import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from "node:http";
import { listenOnLoopback, type RunningEmulator } from "./loopback.js";

/** The content type of each AWS JSON protocol: DynamoDB and SQS speak 1.0, Kinesis 1.1. */
export const AwsJsonContentType = {
  V1_0: "application/x-amz-json-1.0",
  V1_1: "application/x-amz-json-1.1",
} as const;
export type AwsJsonContentType = (typeof AwsJsonContentType)[keyof typeof AwsJsonContentType];

/** Reads a request's whole body. */
export function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

/** Sends a proxied request on to `upstream` with its method, path and headers (host and length recomputed). */
export function forward(upstream: string, request: IncomingMessage, body: Uint8Array): Promise<Response> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === "string" && name !== "host" && name !== "content-length") headers[name] = value;
  }
  return fetch(`${upstream}${request.url ?? "/"}`, {
    method: request.method ?? "POST",
    headers,
    body: new Uint8Array(body),
  });
}

/** Writes an upstream's answer back to the proxied client (fetch has already decoded the body). */
export async function relay(response: ServerResponse, upstream: Response): Promise<void> {
  const headers: Record<string, string> = {};
  upstream.headers.forEach((value, name) => {
    if (name !== "content-length" && name !== "transfer-encoding" && name !== "content-encoding")
      headers[name] = value;
  });
  response.writeHead(upstream.status, headers);
  response.end(Buffer.from(await upstream.arrayBuffer()));
}

/** Connections to the upstreams, kept open between proxied requests. */
const upstreamAgent = new Agent({ keepAlive: true });
/** Hop-by-hop headers: they describe one connection, not the message, and are not passed on. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "host", "content-length"]);

/** An upstream's whole answer, read as bytes: nothing decoded, nothing re-encoded. */
export interface UpstreamAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** The request's own headers, less the hop-by-hop ones, with the length of the body sent on. */
function headersToForward(request: IncomingMessage, body: Uint8Array): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = { "content-length": body.byteLength };
  for (const [name, value] of Object.entries(request.headers))
    if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
  return headers;
}

/**
 * Sends a proxied request on to `upstream` (its method, path and headers, with `body`) over a kept-alive
 * connection and reads the whole answer. What `forward` does, without fetch: a proxy that every request of
 * a run crosses (the chaos run's doors, its restartable SQS) spent more CPU in fetch's decoding and web
 * streams than the emulators spent answering (docs/benchmarks/ceiling.md). GET and HEAD send no body.
 */
export function exchange(
  upstream: string,
  request: IncomingMessage,
  body: Uint8Array,
): Promise<UpstreamAnswer> {
  const url = new URL(request.url ?? "/", upstream);
  const method = request.method ?? "POST";
  const bodyless = method === "GET" || method === "HEAD";
  const headers = headersToForward(request, bodyless ? new Uint8Array(0) : body);
  if (bodyless) delete headers["content-length"];
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        hostname: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method,
        headers,
        agent: upstreamAgent,
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (c: Buffer) => chunks.push(c));
        answer.once("end", () =>
          resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(chunks) }),
        );
        answer.once("error", reject);
      },
    );
    outgoing.once("error", reject);
    outgoing.end(bodyless ? undefined : body);
  });
}

/** Writes an upstream's answer read by `exchange` back to the proxied client, byte for byte. */
export function answerWith(response: ServerResponse, answer: UpstreamAnswer): void {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(answer.headers))
    if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
  // A HEAD answer's length is the object's, not its (empty) body's.
  const length = response.req?.method === "HEAD" ? answer.headers["content-length"] : answer.body.byteLength;
  if (length !== undefined) headers["content-length"] = length;
  response.writeHead(answer.status, headers);
  response.end(answer.body);
}

/**
 * Forwards a proxied request as received and streams the upstream's answer back byte for byte (status,
 * headers, body; an encoded body stays encoded). Unlike `forward` + `relay` it decodes nothing and
 * keeps its upstream connections open: every request of the local pipeline's processor crosses such a
 * proxy, where fetch's decoding and web streams cost more CPU than the emulator's own answer
 * (docs/benchmarks/local-pipeline.md).
 */
export function passThrough(
  upstream: string,
  request: IncomingMessage,
  body: Uint8Array,
  response: ServerResponse,
): Promise<void> {
  const url = new URL(request.url ?? "/", upstream);
  const headers = headersToForward(request, body);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        hostname: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: request.method ?? "POST",
        headers,
        agent: upstreamAgent,
      },
      (answer) => {
        const back: OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers))
          if (value !== undefined && (name === "content-length" || !HOP_BY_HOP.has(name))) back[name] = value;
        response.writeHead(answer.statusCode ?? 502, back);
        answer.pipe(response);
        answer.once("end", resolve);
        answer.once("error", reject);
      },
    );
    outgoing.once("error", reject);
    outgoing.end(body);
  });
}

/** One AWS JSON-protocol call: the operation's X-Amz-Target and the content type of its protocol. */
export interface AwsJsonCall {
  /** `<Service>_<version>.<Operation>`, e.g. `DynamoDB_20120810.GetItem`. */
  readonly target: string;
  readonly contentType: AwsJsonContentType;
  /** The signing name in the credential scope, e.g. `dynamodb`. */
  readonly service: string;
}

/**
 * Sends one call to an emulator on the caller's own behalf (a health check, a proxy's extra read). The
 * emulators check the authorization header's form, not its signature, so a fixed dummy one is enough.
 */
export function callAwsJson(endpoint: string, call: AwsJsonCall, payload: object = {}): Promise<Response> {
  return fetch(endpoint, {
    method: "POST",
    headers: {
      "content-type": call.contentType,
      "x-amz-target": call.target,
      authorization: `AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/${call.service}/aws4_request, SignedHeaders=host, Signature=0`,
      "x-amz-date": "20260101T000000Z",
    },
    body: JSON.stringify(payload),
  });
}

/** One request an AWS JSON proxy received, read in full, and the ways to answer it. */
export interface ProxiedCall {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly body: Buffer;
  /** The X-Amz-Target header, `<Service>_<version>.<Operation>` ("" when absent). */
  readonly target: string;
  /** Sends the request to the upstream, with `body` in place of the one received. */
  forward(body?: Uint8Array): Promise<Response>;
  /** Like `forward`, over a kept-alive connection and without fetch: the answer's bytes as they came. */
  exchange(body?: Uint8Array): Promise<UpstreamAnswer>;
  /** Forwards the request as received and streams the upstream's answer back untouched (passThrough). */
  pass(): Promise<void>;
  /** Answers with `text` (an upstream's body already read, or JSON) in the protocol's content type. */
  answer(status: number, text: string): void;
  /** Answers with `body` as JSON in the protocol's content type. */
  answerJson(status: number, body: unknown): void;
}

/**
 * A loopback proxy in front of an AWS JSON-protocol endpoint: every request is read in full and handed
 * to `handle`, which forwards, inspects or answers it. A request `handle` throws on is answered 500
 * InternalFailure, as AWS answers its own faults, unless an answer was already begun.
 */
export function startAwsJsonProxy(
  upstream: string,
  contentType: AwsJsonContentType,
  handle: (call: ProxiedCall) => Promise<void>,
): Promise<RunningEmulator> {
  const server = createServer(async (request, response) => {
    const answer = (status: number, text: string) => {
      response.writeHead(status, { "content-type": contentType });
      response.end(text);
    };
    try {
      const body = await readBody(request);
      await handle({
        request,
        response,
        body,
        target: String(request.headers["x-amz-target"] ?? ""),
        forward: (replacement = body) => forward(upstream, request, replacement),
        exchange: (replacement = body) => exchange(upstream, request, replacement),
        pass: () => passThrough(upstream, request, body, response),
        answer,
        answerJson: (status, value) => answer(status, JSON.stringify(value)),
      });
    } catch (error) {
      if (!response.headersSent)
        answer(500, JSON.stringify({ __type: "InternalFailure", message: String(error) }));
    }
  });
  return listenOnLoopback(server);
}

/** What a fault proxy may answer instead of the upstream: an AWS JSON error. */
export interface InjectedFault {
  readonly status: number;
  readonly type: string;
  readonly message: string;
}

/**
 * A loopback proxy in front of a JSON-protocol AWS endpoint (DynamoDB, Kinesis, SQS) that answers chosen
 * requests with an error instead of forwarding them: `decide` sees the X-Amz-Target and the body.
 * Everything else passes through unchanged. For fault injection in local runs and tests.
 */
export async function startFaultProxy(
  upstream: string,
  decide: (target: string, body: string) => InjectedFault | undefined,
): Promise<RunningEmulator & { readonly injected: () => number }> {
  let injected = 0;
  const running = await startAwsJsonProxy(upstream, AwsJsonContentType.V1_0, async (call) => {
    const fault = decide(call.target, call.body.toString("utf8"));
    if (!fault) return call.pass();
    injected += 1;
    call.answerJson(fault.status, { __type: fault.type, message: fault.message });
  });
  return { ...running, injected: () => injected };
}

/**
 * Starts a proxy in front of an emulator already running and returns the proxy, whose `stop` stops
 * both; if the proxy does not start, the emulator is stopped before the error is thrown.
 */
export async function behindProxy<P extends RunningEmulator>(
  emulator: RunningEmulator,
  startProxy: (upstream: string) => Promise<P>,
): Promise<P> {
  try {
    const proxy = await startProxy(emulator.endpoint);
    return {
      ...proxy,
      stop: async () => {
        await proxy.stop();
        await emulator.stop();
      },
    };
  } catch (error) {
    await emulator.stop();
    throw error;
  }
}
