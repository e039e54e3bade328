import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { loadConfig } from "@mcp-pipeline/aws";
import { failureCodeOf, failureKindOf } from "@mcp-pipeline/contracts";
import { ToolTimeoutError } from "@mcp-pipeline/tools/registry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogueRegistry, toolsConfigSchema } from "../../src/index.js";

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const call = (tool: string, args: Record<string, unknown>) => ({
  tool,
  arguments: args,
  callId: "call-1",
  sessionId: "session-1",
  attempt: 1,
});

describe("text.stats (pure)", () => {
  const registry = catalogueRegistry({ HTTP_TOOL_TIMEOUT_MS: 1_000, TEST_TOOLS: "on" });

  it("counts characters (code points), words and lines and hashes the text", async () => {
    const run = await registry.invoke(call("text.stats", { text: "héllo wörld\nsecond  line 🙂" }), {
      logger: silent,
    });
    expect(run.value).toEqual({
      characters: 26,
      words: 5,
      lines: 2,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  it("is not offered http.request when no base URL is configured", () => {
    expect(registry.names).toEqual(["text.stats", "load.latency"]);
  });
});

describe("test tools (TEST_TOOLS)", () => {
  it.each([
    ["off", ["text.stats"]],
    ["on", ["text.stats", "load.latency"]],
  ])("%s: the registry offers %j", (setting, names) => {
    expect(catalogueRegistry({ HTTP_TOOL_TIMEOUT_MS: 1_000, TEST_TOOLS: setting }).names).toEqual(names);
  });

  it("are off when the environment does not say on", () => {
    const config = loadConfig(toolsConfigSchema, {});
    expect(config.TEST_TOOLS).toBe("off");
    expect(catalogueRegistry(config).names).toEqual(["text.stats"]);
  });

  it("a load.latency job where they are off is an unknown tool (permanent), and nothing waits", async () => {
    const error = await catalogueRegistry({ HTTP_TOOL_TIMEOUT_MS: 1_000, TEST_TOOLS: "off" })
      .invoke(call("load.latency", { latencyMs: 60_000 }), { logger: silent })
      .catch((e) => e);
    expect([failureKindOf(error), failureCodeOf(error)]).toEqual(["permanent", "unknown-tool"]);
  });
});

describe("load.latency", () => {
  const registry = catalogueRegistry({ HTTP_TOOL_TIMEOUT_MS: 1_000, TEST_TOOLS: "on" });

  it("waits, then returns a payload of the asked size", async () => {
    const run = await registry.invoke(call("load.latency", { latencyMs: 5, resultBytes: 1000 }), {
      logger: silent,
    });
    expect((run.value as { payload: string }).payload).toHaveLength(1000);
  });

  it.each([
    ["transient", "injected-transient"],
    ["permanent", "injected-permanent"],
  ])("fails %s when asked", async (fail, code) => {
    const error = await registry
      .invoke(call("load.latency", { latencyMs: 0, fail }), { logger: silent })
      .catch((e) => e);
    expect([failureKindOf(error), failureCodeOf(error)]).toEqual([fail, code]);
  });

  it("fails transiently until the given attempt, then succeeds", async () => {
    const args = { latencyMs: 0, failUntilAttempt: 2 };
    const attempt = (n: number) =>
      registry.invoke({ ...call("load.latency", args), attempt: n }, { logger: silent }).then(
        () => "ok",
        (e) => failureCodeOf(e),
      );
    expect([await attempt(1), await attempt(2), await attempt(3)]).toEqual([
      "injected-transient",
      "injected-transient",
      "ok",
    ]);
  });

  it("stops waiting when its time runs out", async () => {
    const error = await registry
      .invoke(call("load.latency", { latencyMs: 10_000 }), { logger: silent, budgetMs: 20 })
      .catch((e) => e);
    expect(error).toBeInstanceOf(ToolTimeoutError);
  });
});

describe("http.request against a loopback server", () => {
  let server: Server;
  let baseUrl: string;
  const seen: string[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      const status = Number(new URL(request.url ?? "/", "http://x").searchParams.get("status") ?? 200);
      // Never answers: the tool's timeout is the only way out, however slow the machine is.
      if (request.url?.endsWith("/slow")) return;
      if (request.url?.endsWith("/garbled")) {
        response.writeHead(200, { "content-type": "application/json" }).end("{not json");
        return;
      }
      let body = "";
      request.on("data", (c) => {
        body += c;
      });
      request.on("end", () => {
        response.writeHead(status, { "content-type": "application/json" });
        response.end(JSON.stringify({ path: request.url, received: body ? JSON.parse(body) : null }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  // Long enough for an ordinary loopback request on a loaded machine; only /slow reaches it.
  const registry = (timeoutMs = 10_000) =>
    catalogueRegistry({ HTTP_TOOL_BASE_URL: baseUrl, HTTP_TOOL_TIMEOUT_MS: timeoutMs });

  it("returns the status and parsed JSON body, and sends a POST body", async () => {
    const run = await registry().invoke(
      call("http.request", { path: "/items", method: "POST", body: { a: 1 } }),
      {
        logger: silent,
      },
    );
    expect(run.value).toMatchObject({ status: 200, body: { path: "/api/items", received: { a: 1 } } });
  });

  it.each([
    [503, "transient", "downstream-5xx"],
    [429, "transient", "downstream-throttled"],
    [404, "permanent", "downstream-4xx"],
  ])("maps status %i to a %s error", async (status, kind, code) => {
    const error = await registry()
      .invoke(call("http.request", { path: `/x?status=${status}` }), { logger: silent })
      .catch((e) => e);
    expect([failureKindOf(error), failureCodeOf(error)]).toEqual([kind, code]);
  });

  it("times out a slow downstream (transient)", async () => {
    const error = await registry(200)
      .invoke(call("http.request", { path: "/slow" }), { logger: silent })
      .catch((e) => e);
    expect(error).toBeInstanceOf(ToolTimeoutError);
  });

  it("treats invalid JSON from the downstream as permanent", async () => {
    const error = await registry()
      .invoke(call("http.request", { path: "/garbled" }), { logger: silent })
      .catch((e) => e);
    expect([failureKindOf(error), failureCodeOf(error)]).toEqual(["permanent", "downstream-bad-json"]);
  });

  it("treats an unreachable downstream as transient", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const tools = catalogueRegistry({
      HTTP_TOOL_BASE_URL: `http://127.0.0.1:${port}`,
      HTTP_TOOL_TIMEOUT_MS: 10_000,
    });
    const error = await tools.invoke(call("http.request", { path: "/" }), { logger: silent }).catch((e) => e);
    expect([failureKindOf(error), failureCodeOf(error)]).toEqual(["transient", "downstream-unreachable"]);
  });

  it("refuses a path that does not start with / before any request", async () => {
    const before = seen.length;
    const error = await registry()
      .invoke(call("http.request", { path: "http://elsewhere/" }), { logger: silent })
      .catch((e) => e);
    expect(failureCodeOf(error)).toBe("invalid-arguments");
    expect(seen).toHaveLength(before);
  });
});

describe("tools configuration", () => {
  it.each([
    [{ HTTP_TOOL_BASE_URL: "not a url" }, "HTTP_TOOL_BASE_URL"],
    [{ HTTP_TOOL_BASE_URL: "ftp://files.example" }, "HTTP_TOOL_BASE_URL"],
    [{ HTTP_TOOL_TIMEOUT_MS: "0" }, "HTTP_TOOL_TIMEOUT_MS"],
    [{ HTTP_TOOL_BASE_URL: "https://user:secret@api.example/v1" }, "HTTP_TOOL_BASE_URL"],
    [{ HTTP_TOOL_BASE_URL: "https://api.example/v1?key=k" }, "HTTP_TOOL_BASE_URL"],
    [{ HTTP_TOOL_BASE_URL: "https://api.example/v1#top" }, "HTTP_TOOL_BASE_URL"],
    [{ HTTP_TOOL_MAX_RESPONSE_BYTES: "0" }, "HTTP_TOOL_MAX_RESPONSE_BYTES"],
    [{ HTTP_TOOL_MAX_RESPONSE_BYTES: "10485761" }, "HTTP_TOOL_MAX_RESPONSE_BYTES"],
    [{ TEST_TOOLS: "true" }, "TEST_TOOLS"],
    [{ TEST_TOOLS: "ON" }, "TEST_TOOLS"],
  ])("refuses %j with a message naming the variable", (env, name) => {
    expect(() => loadConfig(toolsConfigSchema, env)).toThrow(name);
  });

  it("never repeats a refused base URL's credentials in its error", () => {
    expect(() =>
      loadConfig(toolsConfigSchema, { HTTP_TOOL_BASE_URL: "https://user:hunter2@api.example/v1" }),
    ).toThrow(expect.objectContaining({ message: expect.not.stringContaining("hunter2") }));
  });
});
