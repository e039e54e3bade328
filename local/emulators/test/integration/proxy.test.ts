import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AwsJsonContentType,
  answerWith,
  behindProxy,
  callAwsJson,
  exchange,
  listenOnLoopback,
  type RunningEmulator,
  startAwsJsonProxy,
} from "../../src/index.js";

// An upstream that echoes what reached it, so the tests see what the proxy forwarded.
let upstream: RunningEmulator;
beforeAll(async () => {
  upstream = await listenOnLoopback(
    createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (c: Buffer) => chunks.push(c));
      request.on("end", () => {
        response.writeHead(200, { "content-type": "application/x-amz-json-1.0", "x-upstream": "yes" });
        response.end(
          JSON.stringify({
            target: request.headers["x-amz-target"],
            body: Buffer.concat(chunks).toString("utf8"),
            ...(request.headers.authorization ? { authorization: request.headers.authorization } : {}),
            ...(request.headers["content-type"] !== "application/x-amz-json-1.0"
              ? { contentType: request.headers["content-type"] }
              : {}),
          }),
        );
      });
    }),
  );
});
afterAll(() => upstream.stop());

const post = (endpoint: string, target: string, body: string) =>
  fetch(endpoint, {
    method: "POST",
    headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": target },
    body,
  });

describe("startAwsJsonProxy", () => {
  it("passes a request through with its target and body, and relays the upstream's answer", async () => {
    const proxy = await startAwsJsonProxy(upstream.endpoint, AwsJsonContentType.V1_0, (call) => call.pass());
    try {
      const response = await post(proxy.endpoint, "AmazonSQS.ListQueues", '{"a":1}');
      expect(response.status).toBe(200);
      expect(response.headers.get("x-upstream")).toBe("yes");
      expect(await response.json()).toEqual({ target: "AmazonSQS.ListQueues", body: '{"a":1}' });
    } finally {
      await proxy.stop();
    }
  });

  it("forwards a replaced body and answers in the protocol's content type", async () => {
    const proxy = await startAwsJsonProxy(upstream.endpoint, AwsJsonContentType.V1_1, async (call) => {
      const forwarded = await call.forward(Buffer.from('{"replaced":true}'));
      call.answer(202, await forwarded.text());
    });
    try {
      const response = await post(proxy.endpoint, "Kinesis_20131202.GetRecords", "{}");
      expect(response.status).toBe(202);
      expect(response.headers.get("content-type")).toBe("application/x-amz-json-1.1");
      expect(await response.json()).toEqual({
        target: "Kinesis_20131202.GetRecords",
        body: '{"replaced":true}',
      });
    } finally {
      await proxy.stop();
    }
  });

  it("exchanges a replaced body and answers with the upstream's bytes, status and headers", async () => {
    const proxy = await startAwsJsonProxy(upstream.endpoint, AwsJsonContentType.V1_0, async (call) => {
      const answer = await call.exchange(Buffer.from('{"replaced":true}'));
      answerWith(call.response, { ...answer, status: 201 });
    });
    try {
      const response = await post(proxy.endpoint, "DynamoDB_20120810.PutItem", "{}");
      expect(response.status).toBe(201);
      expect(response.headers.get("x-upstream")).toBe("yes");
      expect(await response.json()).toEqual({
        target: "DynamoDB_20120810.PutItem",
        body: '{"replaced":true}',
      });
    } finally {
      await proxy.stop();
    }
  });

  it("answers 500 InternalFailure when the handler throws", async () => {
    const proxy = await startAwsJsonProxy(upstream.endpoint, AwsJsonContentType.V1_0, () => {
      throw new Error("cannot read this request");
    });
    try {
      const response = await post(proxy.endpoint, "AmazonSQS.ListQueues", "not json");
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({
        __type: "InternalFailure",
        message: "Error: cannot read this request",
      });
    } finally {
      await proxy.stop();
    }
  });
});

describe("callAwsJson", () => {
  it("posts the payload with the target, the protocol's content type and a credential scope naming the service", async () => {
    const response = await callAwsJson(
      upstream.endpoint,
      { target: "Kinesis_20131202.ListStreams", contentType: AwsJsonContentType.V1_1, service: "kinesis" },
      { Limit: 1 },
    );
    expect(await response.json()).toEqual({
      target: "Kinesis_20131202.ListStreams",
      body: '{"Limit":1}',
      contentType: "application/x-amz-json-1.1",
      authorization: expect.stringMatching(
        /^AWS4-HMAC-SHA256 Credential=test\/\d{8}\/us-east-1\/kinesis\/aws4_request,/,
      ),
    });
  });
});

describe("behindProxy", () => {
  const trackedEmulator = () => {
    const state = { stopped: 0 };
    const emulator: RunningEmulator = {
      endpoint: upstream.endpoint,
      stop: async () => {
        state.stopped += 1;
      },
    };
    return { emulator, state };
  };

  it("returns the proxy, whose stop stops the emulator too", async () => {
    const { emulator, state } = trackedEmulator();
    const proxy = await behindProxy(emulator, (endpoint) =>
      startAwsJsonProxy(endpoint, AwsJsonContentType.V1_0, (call) => call.pass()),
    );
    const response = await post(proxy.endpoint, "AmazonSQS.ListQueues", "{}");
    expect(await response.json()).toEqual({ target: "AmazonSQS.ListQueues", body: "{}" });
    await proxy.stop();
    expect(state.stopped).toBe(1);
  });

  it("stops the emulator and rethrows when the proxy does not start", async () => {
    const { emulator, state } = trackedEmulator();
    await expect(behindProxy(emulator, () => Promise.reject(new Error("no port free")))).rejects.toThrow(
      "no port free",
    );
    expect(state.stopped).toBe(1);
  });
});

describe("exchange", () => {
  it("sends a HEAD without a body and keeps the length the upstream gave for it", async () => {
    const object = await listenOnLoopback(
      createServer((request, response) => {
        response.writeHead(200, { "content-length": "1234", "x-method": request.method ?? "" });
        response.end();
      }),
    );
    const proxy = await listenOnLoopback(
      createServer(async (request, response) => {
        answerWith(response, await exchange(object.endpoint, request, Buffer.alloc(0)));
      }),
    );
    try {
      const response = await fetch(`${proxy.endpoint}/bucket/key`, { method: "HEAD" });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-method")).toBe("HEAD");
      expect(response.headers.get("content-length")).toBe("1234");
    } finally {
      await proxy.stop();
      await object.stop();
    }
  });
});
