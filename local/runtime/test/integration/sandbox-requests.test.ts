import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LocalFunction } from "../../src/index.js";

/**
 * The sandbox's record of the HTTP requests a function sends (sandbox-worker.mjs): what a harness needs to
 * know which invocation sent a request its downstream received, observed without the function's say.
 */

const HANDLER = `
import http from "node:http";
import diagnostics from "node:diagnostics_channel";
export const handler = async (event) => {
  if (event.meddle) {
    // Code that subscribes to the same channels and leaves them again must not end the sandbox's record.
    const own = () => {};
    for (const name of ["undici:client:sendHeaders", "http.client.request.start"]) {
      diagnostics.subscribe(name, own);
      diagnostics.unsubscribe(name, own);
    }
  }
  const answer = await fetch(event.url + "/effects/" + event.id + "?try=1", {
    method: "POST",
    headers: { "Idempotency-Key": "key-" + event.id, "content-type": "application/json" },
    body: "{}",
  });
  await answer.text();
  if (event.hang) await fetch(event.url + "/hang", { method: "POST", body: "{}" });
  await new Promise((resolve, reject) =>
    http
      .request(event.url + "/plain/" + event.id, { method: "PUT" }, (r) => r.resume().on("end", resolve))
      .on("error", reject)
      .end("x"),
  );
  return "sent";
};
`;

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

/** A loopback server that answers every request at once but `/hang`, which it never answers. */
async function downstream(): Promise<{ url: string; heads: IncomingMessage[] }> {
  const heads: IncomingMessage[] = [];
  const server = createServer((request, response) => {
    heads.push(request);
    request.resume();
    if (request.url === "/hang") return;
    request.on("end", () => response.end("{}"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  stops.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, heads };
}

async function fn(timeoutMs: number): Promise<LocalFunction> {
  const dir = await mkdtemp(join(tmpdir(), "sandbox-requests-"));
  const codeFile = join(dir, "handler.mjs");
  await writeFile(codeFile, HANDLER);
  const f = new LocalFunction(
    { name: "sender", codeFile, timeoutMs, memoryMb: 128, environment: {} },
    {},
    () => {},
  );
  stops.push(async () => {
    await f.stop();
    await rm(dir, { recursive: true, force: true });
  });
  return f;
}

describe("the sandbox's record of the requests a function sends", () => {
  it("records each request with the invocation it was sent during, when, method, origin, path and idempotency key", async () => {
    const { url } = await downstream();
    const f = await fn(60_000);
    const from = Date.now();
    const first = await f.invoke({ url, id: "a" });
    const between = Date.now();
    const second = await f.invoke({ url, id: "b" });
    const to = Date.now();
    expect(first).toMatchObject({ kind: "ok", payload: '"sent"' });
    expect(first.requests).toEqual([
      {
        requestId: first.requestId,
        at: expect.any(Number),
        via: "fetch",
        method: "POST",
        origin: url,
        path: "/effects/a?try=1",
        idempotencyKey: "key-a",
      },
      {
        requestId: first.requestId,
        at: expect.any(Number),
        via: "node:http",
        method: "PUT",
        origin: url,
        path: "/plain/a",
        idempotencyKey: undefined,
      },
    ]);
    // The warm sandbox's second invocation has its own requests, and none of the first's.
    expect(second.requests?.map((r) => [r.requestId, r.path])).toEqual([
      [second.requestId, "/effects/b?try=1"],
      [second.requestId, "/plain/b"],
    ]);
    expect(second.requestId).not.toBe(first.requestId);
    const times = (rs: typeof first.requests) => (rs ?? []).map((r) => r.at);
    expect(times(first.requests).every((at) => at >= from && at <= between)).toBe(true);
    expect(times(second.requests).every((at) => at >= between && at <= to)).toBe(true);
  });

  it("hands over the requests of an invocation stopped at its timeout, its last one included", async () => {
    const { url, heads } = await downstream();
    const f = await fn(3_000);
    const result = await f.invoke({ url, id: "slow", hang: true });
    expect(result).toMatchObject({ kind: "function-error", timedOut: true });
    expect(result.requests?.map((r) => [r.requestId, r.method, r.path])).toEqual([
      [result.requestId, "POST", "/effects/slow?try=1"],
      [result.requestId, "POST", "/hang"],
    ]);
    // What the record says was sent is what reached the server.
    expect(heads.map((h) => h.url)).toEqual(["/effects/slow?try=1", "/hang"]);
  });

  it("keeps recording when the function's code subscribes to the same channels and leaves them", async () => {
    const { url } = await downstream();
    const f = await fn(60_000);
    await f.invoke({ url, id: "m", meddle: true });
    const after = await f.invoke({ url, id: "n", meddle: true });
    expect(after.requests?.map((r) => r.path)).toEqual(["/effects/n?try=1", "/plain/n"]);
  });
});
