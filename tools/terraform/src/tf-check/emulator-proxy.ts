/**
 * An HTTP proxy in front of moto's server that closes the gaps the hashicorp/aws provider runs into
 * (docs/deploy.md, "The Terraform check", lists each one). Everything else passes through unchanged.
 * Used only by `npm run tf:check`; the product's Terraform is never changed to please the emulator.
 *
 * 1. CloudWatch over RPC v2 CBOR: translated to awsJson1_0 and back (cbor-json.ts).
 * 2. SQS RedriveAllowPolicy: moto stores the attribute but never returns it, so the provider waits for
 *    it forever after SetQueueAttributes. The proxy remembers what was set and adds it to
 *    GetQueueAttributes answers that ask for it.
 * 3. Lambda ESMs on an enhanced fan-out consumer: moto refuses a consumer ARN as an event source. The
 *    proxy creates the mapping on the consumer's stream and answers with the consumer ARN again, so
 *    Terraform sees what it asked for.
 * 4. Kinesis CreateStream: moto ignores its Tags (a perpetual diff on every plan).
 * 5. Lambda LoggingConfig: moto drops it (a perpetual diff on every function).
 * 6. S3 CreateBucket with Tags in its CreateBucketConfiguration (hashicorp/aws 6.x tags on create): moto
 *    ignores them (a perpetual diff on every bucket, and on its policy). The proxy answers
 *    UnsupportedArgument, which the provider reads as an S3-compatible API without tag-on-create: it
 *    creates the bucket without them and tags it with PutBucketTagging, which moto keeps.
 * 7. Kinesis tags by ARN (ListTagsForResource, TagResource, UntagResource), which hashicorp/aws 6.x uses for
 *    an enhanced fan-out consumer: moto has none of them and answers HTTP 500, which the AWS SDK for Go
 *    retries 25 times with backoff, over and over: prod's apply never finished. RegisterStreamConsumer's
 *    Tags are ignored too. The proxy keeps each consumer's tags (from RegisterStreamConsumer and the tag
 *    calls) and answers the three calls for a consumer that moto holds.
 * And SQS RedrivePolicy is answered compact, as AWS does (moto's spacing shows as a change).
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { listenOnLoopback, readBody } from "@mcp-pipeline/emulators";
import {
  CLOUDWATCH_TARGET_PREFIX,
  cborRequestToJson,
  jsonResponseToCbor,
  rpcV2Operation,
} from "./cbor-json.ts";

export type ProxyEvent =
  | { readonly kind: "cloudwatch-cbor"; readonly operation: string; readonly status: number }
  | { readonly kind: "redrive-allow-policy-returned"; readonly queue: string }
  | { readonly kind: "redrive-policy-compacted"; readonly queue: string }
  | { readonly kind: "stream-tags-added"; readonly stream: string }
  | { readonly kind: "bucket-tags-on-create-refused"; readonly bucket: string }
  | { readonly kind: "lambda-logging-config-returned"; readonly function: string }
  | { readonly kind: "esm-consumer-arn"; readonly consumerArn: string }
  | { readonly kind: "consumer-tags"; readonly operation: string; readonly consumerArn: string };

export interface EmulatorProxy {
  readonly endpoint: string;
  /** What the proxy translated, for the check's closing note (each gap that was actually hit). */
  readonly events: readonly ProxyEvent[];
  close(): Promise<void>;
}

interface Upstream {
  readonly status: number;
  readonly headers: IncomingMessage["headers"];
  readonly body: Buffer;
}

const CONSUMER_ARN = /^(arn:aws[a-z-]*:kinesis:[^:]+:\d+:stream\/[^/]+)\/consumer\/[^/:]+(?::[0-9.]+)?$/;
const ESM_PATH = /^\/2015-03-31\/event-source-mappings\/?([0-9a-f-]*)/;
// CreateFunction (no name), GetFunction, DeleteFunction, and .../configuration (Get/UpdateFunctionConfiguration).
const FUNCTION_PATH = /^\/2015-03-31\/functions\/?([^/]*)(\/configuration)?\/?$/;

function forward(
  target: URL,
  method: string,
  path: string,
  headers: IncomingMessage["headers"],
  body: Buffer,
): Promise<Upstream> {
  const outgoing: Record<string, string | string[] | undefined> = {
    ...headers,
    host: target.host,
    "content-length": String(body.byteLength),
  };
  // Hop-by-hop headers stay here: the body is forwarded whole, already read.
  for (const hop of ["transfer-encoding", "expect", "connection", "keep-alive"]) delete outgoing[hop];
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: target.hostname, port: target.port, method, path, headers: outgoing },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function reply(
  res: ServerResponse,
  upstream: Upstream,
  body: Buffer = upstream.body,
  extra: Record<string, string> = {},
) {
  const headers: Record<string, string | string[]> = {};
  for (const [key, value] of Object.entries(upstream.headers)) {
    if (value === undefined || key === "content-length" || key === "transfer-encoding") continue;
    headers[key] = value;
  }
  res.writeHead(upstream.status, { ...headers, ...extra, "content-length": String(body.byteLength) });
  res.end(body);
}

/** A request as the bridges read it: the body whole, and a copy of the headers. */
interface ProxyRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: Buffer;
  /** X-Amz-Target: the operation of an awsJson request (SQS, Kinesis), "" for the others. */
  readonly amzTarget: string;
}

/** One gap: true when it answered the request, false to let the next one look at it. */
type Bridge = (request: ProxyRequest, res: ServerResponse) => Promise<boolean>;

function parsed<T>(body: Buffer): T {
  return JSON.parse(body.toString("utf8") || "{}") as T;
}

const queueName = (url: unknown) =>
  String(url ?? "")
    .split("/")
    .pop() ?? "";

export async function startEmulatorProxy(motoEndpoint: string): Promise<EmulatorProxy> {
  const bridges = new Bridges(new URL(motoEndpoint));
  const server = createServer((req, res) => {
    bridges.handle(req, res).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(`emulator proxy: ${message}`);
    });
  });
  const running = await listenOnLoopback(server);
  return { endpoint: running.endpoint, events: bridges.events, close: running.stop };
}

/**
 * The gaps of the file's header, one method each, tried in a fixed order, with what each must remember
 * between requests; a request no gap answers is forwarded to moto unchanged.
 */
class Bridges {
  readonly events: ProxyEvent[] = [];
  private readonly redriveAllow = new Map<string, string>(); // queue name -> RedriveAllowPolicy
  private readonly consumerOf = new Map<string, string>(); // ESM UUID -> the consumer ARN it was created with
  private readonly loggingConfig = new Map<string, unknown>(); // function name -> the LoggingConfig it was given
  private readonly consumerTags = new Map<string, Record<string, string>>(); // consumer ARN -> its tags
  private readonly answering: readonly Bridge[] = [
    (r, res) => this.queueAttributes(r, res),
    (r, res) => this.bucketTagsOnCreate(r, res),
    (r, res) => this.streamTagsOnCreate(r, res),
    (r, res) => this.consumerRegistration(r, res),
    (r, res) => this.consumerTagOperation(r, res),
    (r, res) => this.functionLoggingConfig(r, res),
    (r, res) => this.esmOnConsumer(r, res),
  ];

  private readonly target: URL;

  constructor(target: URL) {
    this.target = target;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const headers = { ...req.headers };
    const request: ProxyRequest = {
      method: req.method ?? "GET",
      path: req.url ?? "/",
      headers,
      body,
      amzTarget: String(headers["x-amz-target"] ?? ""),
    };
    if (await this.cloudWatchCbor(request, res)) return;
    this.rememberRedriveAllowPolicy(request);
    for (const bridge of this.answering) if (await bridge(request, res)) return;
    reply(res, await this.pass(request));
  }

  /** The request to moto as it came, or with another body. */
  private pass(request: ProxyRequest, body: Buffer = request.body): Promise<Upstream> {
    return forward(this.target, request.method, request.path, request.headers, body);
  }

  /** Another operation of the same awsJson service, asked of moto with the request's credentials. */
  private ask(request: ProxyRequest, amzTarget: string, input: unknown): Promise<Upstream> {
    return forward(
      this.target,
      "POST",
      request.path,
      { ...request.headers, "x-amz-target": amzTarget },
      Buffer.from(JSON.stringify(input)),
    );
  }

  /** 1. CloudWatch, RPC v2 CBOR -> awsJson1_0 -> RPC v2 CBOR. */
  private async cloudWatchCbor(request: ProxyRequest, res: ServerResponse): Promise<boolean> {
    const rpc = rpcV2Operation(request.path);
    if (rpc === null || rpc.service !== CLOUDWATCH_TARGET_PREFIX) return false;
    const json = Buffer.from(cborRequestToJson(request.body));
    const { "smithy-protocol": _protocol, ...headers } = request.headers;
    const upstream = await forward(
      this.target,
      "POST",
      "/",
      {
        ...headers,
        "content-type": "application/x-amz-json-1.0",
        accept: "application/json",
        "x-amz-target": `${CLOUDWATCH_TARGET_PREFIX}.${rpc.operation}`,
      },
      json,
    );
    this.events.push({ kind: "cloudwatch-cbor", operation: rpc.operation, status: upstream.status });
    const cborBody = Buffer.from(jsonResponseToCbor(upstream.body.toString("utf8")));
    const { "content-type": _type, ...rest } = upstream.headers;
    reply(res, { ...upstream, headers: rest }, cborBody, {
      "content-type": "application/cbor",
      "smithy-protocol": "rpc-v2-cbor",
    });
    return true;
  }

  /** 2. SQS RedriveAllowPolicy as set (awsJson1_0: X-Amz-Target AmazonSQS.<Operation>); moto still gets the call. */
  private rememberRedriveAllowPolicy({ amzTarget, body }: ProxyRequest): void {
    if (amzTarget === "AmazonSQS.SetQueueAttributes" || amzTarget === "AmazonSQS.CreateQueue") {
      const input = parsed<{ QueueUrl?: string; QueueName?: string; Attributes?: Record<string, string> }>(
        body,
      );
      const policy = input.Attributes?.RedriveAllowPolicy;
      const queue = input.QueueName ?? queueName(input.QueueUrl);
      // An empty policy removes it (what the provider sends on destroy): no attribute is answered then.
      if (policy === "") this.redriveAllow.delete(queue);
      else if (policy !== undefined) this.redriveAllow.set(queue, policy);
    }
    if (amzTarget === "AmazonSQS.DeleteQueue")
      this.redriveAllow.delete(queueName(parsed<{ QueueUrl?: string }>(body).QueueUrl));
  }

  /** 2. SQS GetQueueAttributes: the remembered RedriveAllowPolicy added, RedrivePolicy compact. */
  private async queueAttributes(request: ProxyRequest, res: ServerResponse): Promise<boolean> {
    if (request.amzTarget !== "AmazonSQS.GetQueueAttributes") return false;
    const input = parsed<{ QueueUrl?: string; AttributeNames?: string[] }>(request.body);
    // moto refuses the name itself ("Unknown Attribute RedriveAllowPolicy"): ask for the others only.
    const names = input.AttributeNames ?? [];
    const wanted = names.some((a) => a === "All" || a === "RedriveAllowPolicy");
    const others = names.filter((a) => a !== "RedriveAllowPolicy");
    const name = queueName(input.QueueUrl);
    const policy = this.redriveAllow.get(name);
    const forwarded = wanted
      ? Buffer.from(JSON.stringify({ ...input, AttributeNames: others.length > 0 ? others : ["QueueArn"] }))
      : request.body;
    const upstream = await this.pass(request, forwarded);
    if (upstream.status !== 200) {
      reply(res, upstream);
      return true;
    }
    const output = JSON.parse(upstream.body.toString("utf8")) as { Attributes?: Record<string, string> };
    const attributes = !wanted || others.length > 0 ? { ...output.Attributes } : {};
    if (wanted && policy !== undefined) {
      attributes.RedriveAllowPolicy = policy;
      this.events.push({ kind: "redrive-allow-policy-returned", queue: name });
    }
    this.compactRedrivePolicy(attributes, name);
    reply(res, upstream, Buffer.from(JSON.stringify({ ...output, Attributes: attributes })));
    return true;
  }

  /** moto answers RedrivePolicy as Python's json.dumps spells it ({"a": 1}); AWS answers it compact. */
  private compactRedrivePolicy(attributes: Record<string, string>, queue: string): void {
    if (attributes.RedrivePolicy === undefined) return;
    const compact = JSON.stringify(JSON.parse(attributes.RedrivePolicy));
    if (compact === attributes.RedrivePolicy) return;
    attributes.RedrivePolicy = compact;
    this.events.push({ kind: "redrive-policy-compacted", queue });
  }

  /** 6. S3 CreateBucket (path style: PUT /<bucket>, no query) with Tags in CreateBucketConfiguration. */
  private async bucketTagsOnCreate(
    { method, path, body }: ProxyRequest,
    res: ServerResponse,
  ): Promise<boolean> {
    const bucketPath = /^\/([^/?]+)\/?$/.exec(path);
    if (method !== "PUT" || bucketPath === null || !body.toString("utf8").includes("<Tags>")) return false;
    const bucket = bucketPath[1] ?? "";
    this.events.push({ kind: "bucket-tags-on-create-refused", bucket });
    res.writeHead(400, { "content-type": "application/xml" });
    res.end(
      `<?xml version="1.0" encoding="UTF-8"?><Error><Code>UnsupportedArgument</Code><Message>Tags in CreateBucketConfiguration are not kept by this emulator</Message><BucketName>${bucket}</BucketName></Error>`,
    );
    return true;
  }

  /** 4. Kinesis CreateStream ignores its Tags: the proxy adds them with AddTagsToStream, as one call. */
  private async streamTagsOnCreate(request: ProxyRequest, res: ServerResponse): Promise<boolean> {
    if (request.amzTarget !== "Kinesis_20131202.CreateStream") return false;
    const input = parsed<{ StreamName?: string; Tags?: Record<string, string> }>(request.body);
    const upstream = await this.pass(request);
    if (upstream.status === 200 && input.Tags !== undefined && Object.keys(input.Tags).length > 0) {
      const tagging = await this.ask(request, "Kinesis_20131202.AddTagsToStream", {
        StreamName: input.StreamName,
        Tags: input.Tags,
      });
      if (tagging.status !== 200) {
        reply(res, tagging);
        return true;
      }
      this.events.push({ kind: "stream-tags-added", stream: input.StreamName ?? "" });
    }
    reply(res, upstream);
    return true;
  }

  /** 7. A consumer's tags as registered, forgotten when it is deregistered (awsJson1_1, Kinesis_20131202). */
  private async consumerRegistration(request: ProxyRequest, res: ServerResponse): Promise<boolean> {
    if (request.amzTarget === "Kinesis_20131202.RegisterStreamConsumer") {
      const input = parsed<{ Tags?: Record<string, string> }>(request.body);
      const upstream = await this.pass(request);
      if (upstream.status === 200) {
        const output = JSON.parse(upstream.body.toString("utf8")) as { Consumer?: { ConsumerARN?: string } };
        const arn = output.Consumer?.ConsumerARN;
        if (arn !== undefined) this.consumerTags.set(arn, { ...input.Tags });
      }
      reply(res, upstream);
      return true;
    }
    if (request.amzTarget === "Kinesis_20131202.DeregisterStreamConsumer") {
      const input = parsed<{ ConsumerARN?: string }>(request.body);
      const upstream = await this.pass(request);
      if (upstream.status === 200 && input.ConsumerARN !== undefined)
        this.consumerTags.delete(input.ConsumerARN);
      reply(res, upstream);
      return true;
    }
    return false;
  }

  /** 7. ListTagsForResource, TagResource, UntagResource on a consumer ARN, answered from what is kept. */
  private async consumerTagOperation(request: ProxyRequest, res: ServerResponse): Promise<boolean> {
    const tagOperation = /^Kinesis_20131202\.(ListTagsForResource|TagResource|UntagResource)$/.exec(
      request.amzTarget,
    );
    if (tagOperation === null) return false;
    const operation = tagOperation[1] as string;
    const input = parsed<{ ResourceARN?: string; Tags?: Record<string, string>; TagKeys?: string[] }>(
      request.body,
    );
    const arn = input.ResourceARN ?? "";
    if (!CONSUMER_ARN.test(arn)) return false;
    // The consumer must exist in moto (AWS answers ResourceNotFoundException otherwise): moto's own
    // DescribeStreamConsumer says so, with its own error.
    const described = await this.ask(request, "Kinesis_20131202.DescribeStreamConsumer", {
      ConsumerARN: arn,
    });
    if (described.status !== 200) {
      reply(res, described);
      return true;
    }
    const tags = { ...this.consumerTags.get(arn) };
    if (operation === "TagResource") Object.assign(tags, input.Tags);
    if (operation === "UntagResource") for (const key of input.TagKeys ?? []) delete tags[key];
    this.consumerTags.set(arn, tags);
    this.events.push({ kind: "consumer-tags", operation, consumerArn: arn });
    const output =
      operation === "ListTagsForResource"
        ? { Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) }
        : {};
    reply(res, described, Buffer.from(JSON.stringify(output)));
    return true;
  }

  /**
   * 5. Lambda LoggingConfig: moto drops it. The proxy remembers what CreateFunction and
   * UpdateFunctionConfiguration set and puts it back into the function's configuration.
   */
  private async functionLoggingConfig(request: ProxyRequest, res: ServerResponse): Promise<boolean> {
    const { method, path, body } = request;
    const fn = FUNCTION_PATH.exec(path.split("?")[0] ?? "");
    if (fn === null) return false;
    const functionName =
      decodeURIComponent(fn[1] ?? "")
        .split(":function:")
        .pop()
        ?.split(":")[0] ?? "";
    if ((method === "POST" || method === "PUT") && body.byteLength > 0)
      this.rememberLoggingConfig(functionName, body);
    if (method === "DELETE" && fn[2] === undefined) this.loggingConfig.delete(functionName);
    const upstream = await this.pass(request);
    if (upstream.status >= 300 || method === "DELETE" || upstream.body.byteLength === 0) {
      reply(res, upstream);
      return true;
    }
    const output = JSON.parse(upstream.body.toString("utf8")) as FunctionConfig & {
      Configuration?: FunctionConfig;
    };
    const changed = this.restoreLoggingConfig(output);
    if (changed) this.events.push({ kind: "lambda-logging-config-returned", function: functionName });
    reply(res, upstream, changed ? Buffer.from(JSON.stringify(output)) : upstream.body);
    return true;
  }

  /** The LoggingConfig a CreateFunction (name in the body) or an update (name in the path) sets. */
  private rememberLoggingConfig(functionName: string, body: Buffer): void {
    const input = JSON.parse(body.toString("utf8")) as { FunctionName?: string; LoggingConfig?: unknown };
    const key =
      functionName ||
      String(input.FunctionName ?? "")
        .split(":function:")
        .pop() ||
      "";
    if (input.LoggingConfig !== undefined) this.loggingConfig.set(key, input.LoggingConfig);
  }

  /** Puts the remembered LoggingConfig into a configuration (GetFunction nests it) moto answered without. */
  private restoreLoggingConfig(output: FunctionConfig & { Configuration?: FunctionConfig }): boolean {
    let changed = false;
    for (const config of [output, output.Configuration]) {
      if (config === undefined || config.FunctionName === undefined) continue;
      const remembered = this.loggingConfig.get(config.FunctionName);
      if (remembered !== undefined && config.LoggingConfig === undefined) {
        config.LoggingConfig = remembered;
        changed = true;
      }
    }
    return changed;
  }

  /**
   * 3. Lambda ESMs whose source is an enhanced fan-out consumer (moto spells its ARN without AWS's
   * ":<creation epoch>" suffix; both are recognised).
   */
  private async esmOnConsumer(request: ProxyRequest, res: ServerResponse): Promise<boolean> {
    const { method, path } = request;
    if (ESM_PATH.exec(path) === null) return false;
    let body = request.body;
    let consumerArn: string | undefined;
    if ((method === "POST" || method === "PUT") && body.byteLength > 0) {
      const input = JSON.parse(body.toString("utf8")) as { EventSourceArn?: string };
      const match = CONSUMER_ARN.exec(input.EventSourceArn ?? "");
      if (match !== null) {
        consumerArn = input.EventSourceArn;
        input.EventSourceArn = match[1] as string;
        body = Buffer.from(JSON.stringify(input));
        this.events.push({ kind: "esm-consumer-arn", consumerArn: consumerArn as string });
      }
    }
    const upstream = await this.pass(request, body);
    if (consumerArn !== undefined && upstream.status < 300) {
      const created = JSON.parse(upstream.body.toString("utf8")) as { UUID?: string };
      if (created.UUID !== undefined) this.consumerOf.set(created.UUID, consumerArn);
    }
    reply(res, upstream, upstream.status < 300 ? this.restoreConsumerArns(upstream.body) : upstream.body);
    return true;
  }

  /** The consumer ARN back in each mapping moto answers (one, or a list) that was created on a consumer. */
  private restoreConsumerArns(body: Buffer): Buffer {
    if (this.consumerOf.size === 0 || body.byteLength === 0) return body;
    const parsedBody = JSON.parse(body.toString("utf8")) as {
      UUID?: string;
      EventSourceArn?: string;
      EventSourceMappings?: { UUID?: string; EventSourceArn?: string }[];
    };
    const fix = (m: { UUID?: string; EventSourceArn?: string }) => {
      const consumer = m.UUID === undefined ? undefined : this.consumerOf.get(m.UUID);
      if (consumer !== undefined) m.EventSourceArn = consumer;
    };
    fix(parsedBody);
    for (const m of parsedBody.EventSourceMappings ?? []) fix(m);
    return Buffer.from(JSON.stringify(parsedBody));
  }
}

interface FunctionConfig {
  FunctionName?: string;
  LoggingConfig?: unknown;
}
