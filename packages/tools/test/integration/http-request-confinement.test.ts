import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { failureCodeOf, failureKindOf } from "@mcp-pipeline/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogueRegistry } from "../../src/index.js";

// The http.request tool against two loopback servers: the configured downstream (base URL
// http://127.0.0.1:<port>/api) and "elsewhere", which stands for every host a job must not reach (the
// instance metadata service, the Lambda Runtime API on 127.0.0.1:9001, another site). Elsewhere's request
// log is the witness: the tool cannot touch it, and a path that escapes shows there.

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const call = (args: Record<string, unknown>) => ({
  tool: "http.request",
  arguments: args,
  callId: "call-1",
  sessionId: "session-1",
  attempt: 1,
});

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

async function listen(handler: Handler): Promise<{ server: Server; origin: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(`${request.method} ${request.url}`);
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const json = (response: ServerResponse, status: number, body: unknown, headers = {}) =>
  response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));

let downstream: Awaited<ReturnType<typeof listen>>;
let elsewhere: Awaited<ReturnType<typeof listen>>;
let elsewhereHostPort: string;

beforeAll(async () => {
  elsewhere = await listen((_request, response) => json(response, 200, { stolen: true }));
  elsewhereHostPort = elsewhere.origin.slice("http://".length);
  downstream = await listen((request, response) => {
    const url = new URL(request.url ?? "/", "http://x");
    const to = url.searchParams.get("to");
    if (url.pathname === "/api/redirect" && to !== null) {
      response.writeHead(Number(url.searchParams.get("status") ?? 302), { location: to }).end();
      return;
    }
    if (url.pathname === "/api/gzip") {
      // A small compressed body that inflates to `bytes`: content-length is the compressed size.
      const body = gzipSync(`{"payload":"${"x".repeat(Number(url.searchParams.get("bytes")))}"}`);
      response.writeHead(200, {
        "content-type": "application/json",
        "content-encoding": "gzip",
        "content-length": String(body.byteLength),
      });
      response.end(body);
      return;
    }
    if (url.pathname === "/api/big") {
      const bytes = Number(url.searchParams.get("bytes"));
      // Without content-length when asked: the body is counted as it streams.
      const headers = url.searchParams.has("chunked") ? {} : { "content-length": String(bytes + 14) };
      response.writeHead(200, { "content-type": "application/json", ...headers });
      response.end(`{"payload":"${"x".repeat(bytes)}"}`);
      return;
    }
    json(response, 200, { path: request.url });
  });
});
afterAll(() => {
  for (const { server } of [downstream, elsewhere]) {
    server.closeAllConnections();
    server.close();
  }
});

const registry = (maxResponseBytes?: number) =>
  catalogueRegistry({
    HTTP_TOOL_BASE_URL: `${downstream.origin}/api`,
    HTTP_TOOL_TIMEOUT_MS: 10_000,
    ...(maxResponseBytes !== undefined ? { HTTP_TOOL_MAX_RESPONSE_BYTES: maxResponseBytes } : {}),
    TEST_TOOLS: "off",
  });

const attempt = (args: Record<string, unknown>, maxResponseBytes?: number) =>
  registry(maxResponseBytes)
    .invoke(call(args), { logger: silent })
    .then(
      (run) => ({ ok: true as const, value: run.value }),
      (error: unknown) => ({ ok: false as const, error }),
    );

describe("http.request stays within its base URL (SSRF, issue 25 item 8)", () => {
  // Each path of the issue, with "elsewhere" in place of the host it names.
  const escapes: [string, () => string][] = [
    [
      "a second URL after the slash (the metadata service)",
      () => `/http://${elsewhereHostPort}/latest/meta-data/`,
    ],
    ["two backslashes (a scheme-relative URL)", () => `/\\\\${elsewhereHostPort}/x`],
    [
      "http: and backslashes (the Lambda Runtime API)",
      () => `/http:\\\\${elsewhereHostPort}/2018-06-01/runtime/invocation/next`,
    ],
    ["https: and backslashes", () => `/https:\\\\${elsewhereHostPort}/x`],
  ];

  it.each(escapes)("refuses %s before any request, and reaches no other host", async (_label, path) => {
    const [downstreamBefore, elsewhereBefore] = [downstream.seen.length, elsewhere.seen.length];
    const outcome = await attempt({ path: path() });
    expect(elsewhere.seen.slice(elsewhereBefore), "requests that reached another host").toEqual([]);
    expect(downstream.seen.slice(downstreamBefore)).toEqual([]);
    expect(outcome.ok ? "sent" : [failureKindOf(outcome.error), failureCodeOf(outcome.error)]).toEqual([
      "permanent",
      "http-path-refused",
    ]);
  });

  const outsideBasePath = [
    "/../admin",
    "/%2e%2e/admin",
    "/%2E%2E/admin",
    "/.%2e/admin",
    "/items/../../admin",
    "/./../admin",
    "/\\..\\admin",
    "/%2f..%2fadmin",
    "/%5c..%5cadmin",
    "//evil.example/steal",
    "/items//x",
    "/items#fragment",
    "/%zz",
    "/a%00b",
    "/..;/admin",
    "/%252e%252e/admin",
  ];

  it.each(outsideBasePath)("refuses %s before any request (permanent, http-path-refused)", async (path) => {
    const before = downstream.seen.length;
    const outcome = await attempt({ path });
    expect(outcome.ok ? "sent" : [failureKindOf(outcome.error), failureCodeOf(outcome.error)]).toEqual([
      "permanent",
      "http-path-refused",
    ]);
    expect(downstream.seen.slice(before)).toEqual([]);
  });

  it.each([
    ["/items", "/api/items"],
    ["/items/", "/api/items/"],
    ["/", "/api/"],
    ["/items/42?expand=owner&q=a/../b", "/api/items/42?expand=owner&q=a/../b"],
    ["/a.b/..c/c..", "/api/a.b/..c/c.."],
    ["/@elsewhere/x:y", "/api/@elsewhere/x:y"],
    ["/caf%C3%A9", "/api/caf%C3%A9"],
  ])("sends %s as %s on the configured host", async (path, sent) => {
    const outcome = await attempt({ path });
    expect(outcome).toMatchObject({ ok: true, value: { status: 200, body: { path: sent } } });
  });

  it("follows a redirect that stays under the base path, re-checked", async () => {
    const outcome = await attempt({ path: `/redirect?to=${encodeURIComponent("/api/items/7")}` });
    expect(outcome).toMatchObject({ ok: true, value: { body: { path: "/api/items/7" } } });
  });

  it.each([
    ["to another host", () => `${elsewhere.origin}/latest/meta-data/`],
    ["to the same host outside the base path", () => "/admin"],
    ["to a dot segment that leaves the base path", () => "/api/../admin"],
    ["to a dot segment with path parameters (read as .. by Tomcat)", () => "/api/..;/admin"],
    ["scheme-relative, to another host", () => `//${elsewhereHostPort}/x`],
  ])("refuses a redirect %s (permanent), and follows nothing", async (_label, to) => {
    const [downstreamBefore, elsewhereBefore] = [downstream.seen.length, elsewhere.seen.length];
    const outcome = await attempt({ path: `/redirect?to=${encodeURIComponent(to())}` });
    expect(elsewhere.seen.slice(elsewhereBefore), "requests that reached another host").toEqual([]);
    // The redirect itself was asked for; nothing after it.
    expect(downstream.seen.slice(downstreamBefore)).toHaveLength(1);
    expect(outcome.ok ? "followed" : [failureKindOf(outcome.error), failureCodeOf(outcome.error)]).toEqual([
      "permanent",
      "http-redirect-refused",
    ]);
  });

  it("stops a chain of redirects after 5 (permanent)", async () => {
    let to = "/api/items/end";
    for (let i = 0; i < 6; i += 1) to = `/api/redirect?to=${encodeURIComponent(to)}`;
    const outcome = await attempt({ path: to.slice("/api".length) });
    expect(outcome.ok ? "followed" : failureCodeOf(outcome.error)).toBe("http-redirect-refused");
  });

  it.each([
    ["announced by content-length", "/big?bytes=2000"],
    ["streamed without content-length", "/big?bytes=2000&chunked=1"],
  ])("refuses a response body over HTTP_TOOL_MAX_RESPONSE_BYTES, %s (permanent)", async (_label, path) => {
    const outcome = await attempt({ path }, 1_000);
    expect(outcome.ok ? "read" : [failureKindOf(outcome.error), failureCodeOf(outcome.error)]).toEqual([
      "permanent",
      "http-response-too-large",
    ]);
  });

  it("counts a compressed body as it inflates: 10 MB from 10 kB of gzip is refused (permanent)", async () => {
    const outcome = await attempt({ path: "/gzip?bytes=10000000" }, 1_000);
    expect(outcome.ok ? "read" : [failureKindOf(outcome.error), failureCodeOf(outcome.error)]).toEqual([
      "permanent",
      "http-response-too-large",
    ]);
  });

  it("reads a compressed body that inflates to no more than the cap", async () => {
    const outcome = await attempt({ path: "/gzip?bytes=986" }, 1_000);
    expect(outcome).toMatchObject({ ok: true, value: { body: { payload: "x".repeat(986) } } });
  });

  it("reads a body of exactly the cap (1,000 bytes)", async () => {
    const outcome = await attempt({ path: "/big?bytes=986" }, 1_000);
    expect(outcome).toMatchObject({ ok: true, value: { body: { payload: "x".repeat(986) } } });
  });

  it("never puts the path's query (a token) in its error", async () => {
    const outcome = await attempt({ path: "/%2e%2e/admin?token=s3cr3t-value" });
    expect(outcome.ok).toBe(false);
    expect(String((outcome as { error: Error }).error.message)).not.toContain("s3cr3t-value");
  });
});
