import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LocalFunction } from "../../src/index.js";

/**
 * The sandbox's record of the requests a function sends (sandbox-worker.mjs), where the harness's thread
 * is starved or the code outlives its invocation. No socket: node:http with a connection that is a stream
 * in memory, which the sandbox records as it records any node:http request (`http.client.request.start`).
 */
const HANDLER = `
import http from "node:http";
import { Duplex } from "node:stream";
const send = (id) => {
  const request = http.request({
    host: "127.0.0.1",
    port: 9,
    method: "POST",
    path: "/effects/" + id,
    headers: { "idempotency-key": "key-" + id },
    createConnection: () => new Duplex({ read() {}, write(_chunk, _encoding, done) { done(); } }),
  });
  request.on("error", () => {});
  request.end("{}");
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const handler = async (event) => {
  if (event.warm) return "warm";
  if (event.crash) {
    send(event.id);
    await sleep(50);
    // An uncaught exception ends the thread (Lambda's runtime exits on one too).
    setTimeout(() => { throw new Error("crashed after sending"); }, 0);
    await new Promise(() => {});
  }
  if (event.later) {
    // Code the invocation leaves running: it sends after the invocation answered.
    setTimeout(() => send(event.id), event.later);
    return "left running";
  }
  if (event.streamed) {
    // A body streamed after the head: the head leaves at once (flushHeaders), the end 300 ms later.
    let headAt;
    const request = http.request({
      host: "127.0.0.1",
      port: 9,
      method: "POST",
      path: "/effects/" + event.id,
      headers: { "idempotency-key": "key-" + event.id },
      createConnection: () =>
        new Duplex({ read() {}, write(_chunk, _encoding, done) { headAt ??= Date.now(); done(); } }),
    });
    request.on("error", () => {});
    request.flushHeaders();
    await sleep(300);
    request.end("{}");
    await sleep(50);
    return headAt;
  }
  if (event.waitMs) await sleep(event.waitMs);
  return "done";
};
`;

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

async function fn(): Promise<LocalFunction> {
  const dir = await mkdtemp(join(tmpdir(), "sandbox-record-"));
  const codeFile = join(dir, "handler.mjs");
  await writeFile(codeFile, HANDLER);
  const f = new LocalFunction(
    { name: "sender", codeFile, timeoutMs: 60_000, memoryMb: 128, environment: {} },
    {},
    () => {},
  );
  stops.push(async () => {
    await f.stop();
    await rm(dir, { recursive: true, force: true });
  });
  return f;
}

/** Holds this thread (the harness's, starved on a loaded machine) for `ms`. */
function starve(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: no event of this thread is processed
  }
}

describe("the sandbox's record, with the harness's thread starved", () => {
  it("hands over the request of an invocation whose thread crashed, however late the harness reads the thread's messages", async () => {
    const f = await fn();
    await f.invoke({ warm: true });
    const invoked = f.invoke({ crash: true, id: "c" });
    // Let the invocation reach the sandbox, then hold this thread while the sandbox sends and crashes.
    await new Promise((resolve) => setImmediate(resolve));
    starve(1_500);
    const result = await invoked;
    expect(result).toMatchObject({ kind: "function-error", errorType: "Runtime.ExitError" });
    expect(result.requests?.map((r) => r.path)).toEqual(["/effects/c"]);
  });
});

describe("the sandbox's record, with code left running by an invocation", () => {
  it("does not name the next invocation of a warm sandbox as the sender of a request code left running by the one before sent", async () => {
    const f = await fn();
    const first = await f.invoke({ later: 100, id: "left" });
    expect(first).toMatchObject({ kind: "ok" });
    const second = await f.invoke({ waitMs: 600 });
    expect(second).toMatchObject({ kind: "ok" });
    // The request left "left" running, sent during the second invocation: not the second's.
    expect(second.requests?.map((r) => r.path)).toEqual([]);
  });
});

describe("the sandbox's record of a node:http request", () => {
  it("records a node:http request no later than its head left the sandbox", async () => {
    const f = await fn();
    const result = await f.invoke({ streamed: true, id: "s" });
    expect(result).toMatchObject({ kind: "ok" });
    const headAt = Number(result.kind === "ok" ? JSON.parse(result.payload) : Number.NaN);
    const recorded = result.requests?.find((r) => r.path === "/effects/s");
    // The witness may read the head as soon as it left: a record stamped later pairs with no run.
    expect(recorded?.at).toBeLessThanOrEqual(headAt);
  });
});
