import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LocalFunction } from "../../src/index.js";
import { heldInvocation, SCRIPTED_HANDLER } from "../harness.js";

const functions: LocalFunction[] = [];
afterEach(async () => {
  await Promise.all(functions.splice(0).map((f) => f.stop()));
});

function make(
  codeFile: string,
  options: { timeoutMs?: number; handlerExport?: string; compileCacheDir?: string } = {},
) {
  const fn = new LocalFunction(
    {
      name: "f",
      codeFile,
      timeoutMs: options.timeoutMs ?? 2_000,
      memoryMb: 128,
      environment: {},
      ...(options.handlerExport ? { handlerExport: options.handlerExport } : {}),
      ...(options.compileCacheDir ? { compileCacheDir: options.compileCacheDir } : {}),
    },
    {},
    () => {},
  );
  functions.push(fn);
  return fn;
}
const event = (payload: object) => ({ Records: [{ messageId: "m1", body: JSON.stringify(payload) }] });

describe("Lambda-like invocation (local sandboxes)", () => {
  it("with a compile cache, the sandboxes keep the code they compiled there, and still run the handler", async () => {
    const cache = await mkdtemp(join(tmpdir(), "compile-cache-"));
    try {
      const fn = make(SCRIPTED_HANDLER, { compileCacheDir: cache });
      expect(await fn.invoke(event({ id: "a" }))).toMatchObject({ kind: "ok" });
      expect((await readdir(cache)).length).toBeGreaterThan(0);
    } finally {
      await rm(cache, { recursive: true, force: true });
    }
  });

  it("code that cannot load fails every invocation with Runtime.ImportModuleError", async () => {
    const fn = make(join(import.meta.dirname, "fixtures", "missing.mjs"));
    expect(await fn.invoke(event({ id: "a" }))).toMatchObject({
      kind: "function-error",
      errorType: "Runtime.ImportModuleError",
    });
  });

  it("a module without the handler export fails with Runtime.HandlerNotFound", async () => {
    const fn = make(SCRIPTED_HANDLER, { handlerExport: "nope" });
    expect(await fn.invoke(event({ id: "a" }))).toMatchObject({
      kind: "function-error",
      errorType: "Runtime.HandlerNotFound",
    });
  });

  it("a thrown error is a function error with its type and message", async () => {
    const fn = make(SCRIPTED_HANDLER);
    expect(await fn.invoke(event({ id: "x", fail: "throw" }))).toMatchObject({
      kind: "function-error",
      errorType: "Error",
      errorMessage: "poison x",
      timedOut: false,
    });
  });

  it("a sandbox whose thread exits fails its invocation with Runtime.ExitError; the next one starts anew", async () => {
    const dir = await mkdtemp(join(tmpdir(), "exiting-handler-"));
    try {
      const code = join(dir, "exit.mjs");
      await writeFile(
        code,
        "export const handler = async (event) => event.exit ? process.exit(3) : 'ran';\n",
      );
      const fn = make(code);
      expect(await fn.invoke({ exit: true })).toEqual({
        kind: "function-error",
        errorType: "Runtime.ExitError",
        errorMessage: "sandbox exited with code 3",
        timedOut: false,
        durationMs: 0,
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        requests: [],
      });
      expect(await fn.invoke({ exit: false })).toMatchObject({ kind: "ok", payload: '"ran"' });
      expect(fn.stats).toMatchObject({ invocations: 2, errors: 1, coldStarts: 2, timeouts: 0 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a sandbox that timed out is destroyed; the next invocation starts a new one (cold start)", async () => {
    // The slow invocation would outlast any timeout; the fast one has seconds to spare on a loaded machine.
    const fn = make(SCRIPTED_HANDLER, { timeoutMs: 5_000 });
    expect(await fn.invoke(event({ id: "slow", sleepMs: 600_000 }))).toMatchObject({ timedOut: true });
    expect(await fn.invoke(event({ id: "fast" }))).toMatchObject({ kind: "ok" });
    expect(fn.stats).toMatchObject({ coldStarts: 2, timeouts: 1 });
  });

  it("answers a timed-out invocation only once its sandbox thread has exited: no code of it runs after the answer (§9.4 item 6)", async () => {
    const fn = make(SCRIPTED_HANDLER, { timeoutMs: 300 });
    const result = await fn.invoke(event({ id: "overruns", sleepMs: 600_000 }));
    // Read at the answer, before anything else runs on this thread: the timed-out sandbox must be gone.
    const alive = fn.sandboxes;
    expect(result).toMatchObject({ kind: "function-error", timedOut: true });
    expect(alive).toBe(0);
  });

  it("counts an invocation in flight from its call (cold start included) to its answer, and notes when it answered", async () => {
    const fn = make(SCRIPTED_HANDLER, { timeoutMs: 120_000 });
    const held = await heldInvocation();
    expect(fn.lastFinishedAt).toBe(0);
    const answer = fn.invoke(event({ id: "held", touch: held.started, awaitFile: held.release }));
    expect(fn.inFlight).toBe(1);
    await held.hasStarted();
    expect(fn.inFlight).toBe(1);
    const releasedAt = Date.now();
    await held.letGo();
    expect(await answer).toMatchObject({ kind: "ok" });
    expect(fn.inFlight).toBe(0);
    expect(fn.lastFinishedAt).toBeGreaterThanOrEqual(releasedAt);
  });

  it("reuses a warm sandbox for sequential invocations and runs concurrent ones in separate sandboxes", async () => {
    // Generous timeout: the two concurrent invocations wait for each other, not for a timer.
    const fn = make(SCRIPTED_HANDLER, { timeoutMs: 120_000 });
    await fn.invoke(event({ id: "1" }));
    await fn.invoke(event({ id: "2" }));
    expect(fn.stats.coldStarts).toBe(1);
    const dir = await mkdtemp(join(tmpdir(), "barrier-"));
    const [a, b] = [join(dir, "3"), join(dir, "4")];
    const results = await Promise.all([
      fn.invoke(event({ id: "3", touch: a, awaitFile: b })),
      fn.invoke(event({ id: "4", touch: b, awaitFile: a })),
    ]);
    await rm(dir, { recursive: true, force: true });
    expect(results.map((r) => r.kind)).toEqual(["ok", "ok"]);
    expect(fn.stats.coldStarts).toBe(2);
    expect(fn.stats.maxConcurrency).toBe(2);
  });
});
