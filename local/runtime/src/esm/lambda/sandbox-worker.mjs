// One Lambda sandbox: a worker thread that loads the function's code once and runs one invocation at a
// time, like a Lambda execution environment, with what Lambda's Node.js runtime does around the handler
// (node-runtime.mjs). Plain JavaScript so that it loads without a TypeScript loader.
import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import diagnostics from "node:diagnostics_channel";
import module from "node:module";
import { pathToFileURL } from "node:url";
import { getHeapStatistics } from "node:v8";
import { parentPort, workerData } from "node:worker_threads";
import {
  asLoadError,
  loadHandler,
  patchConsole,
  runtimeError,
  setRequestId,
  traceHeader,
} from "./node-runtime.mjs";

const { code, functionName, memoryMb, functionArn, tracing, compileCache } = workerData;
const logError = patchConsole(process.env);

/**
 * The invocation in whose async context code runs: the handler's call runs inside it, and so does every
 * callback, timer and promise it starts, however long after the invocation ended it runs. A request is
 * the invocation's that started it, not the one running when it leaves: code an invocation left running in
 * a warm sandbox must not pass for the next one (the host drops a record of an invocation already handed
 * over, sentOutside). Code the init phase started belongs to none (undefined).
 */
const invocation = new AsyncLocalStorage();
/** The invocation each fetch request was started in, noted when undici creates it. */
const startedIn = new WeakMap();
// Every HTTP request the function sends, recorded by the sandbox as the platform would see it leave, so
// that a caller knows which invocation sent what (the chaos harness's judge of tool runs): passive
// observers subscribed before the code loads, which the code neither calls nor can unsubscribe by accident
// (it would need these very functions). fetch (undici) publishes when a request's headers are written to
// its socket, the moment it left; that write can run in another request's context (a pooled connection
// frees up), so the invocation is the one noted when the request was created (`undici:request:create`,
// published synchronously in the caller's context). node:http is stamped when the request is created
// (`http.client.request.created`, in the caller's context), which is never after its head leaves: its
// `http.client.request.start` is published from end(), after a head flushed early has left (a streamed
// body). Its key is the header given by then (as options); one set later with setHeader is not seen, and a
// record without the run's key pairs with no run (the judge then infers the sender, it never mispairs).
// Each record is posted at once, so that one sent by an invocation stopped at its timeout reaches the host
// before the thread's exit does (Node delivers a thread's posted messages before 'exit').
const post = (requestId, request) =>
  parentPort.postMessage({ sent: { requestId, at: Date.now(), ...request } });
diagnostics.subscribe("undici:request:create", ({ request }) => {
  startedIn.set(request, invocation.getStore());
});
diagnostics.subscribe("undici:client:sendHeaders", ({ request }) => {
  post(startedIn.has(request) ? startedIn.get(request) : invocation.getStore(), {
    via: "fetch",
    method: request.method,
    origin: String(request.origin),
    path: request.path,
    idempotencyKey: undiciHeader(request.headers, "idempotency-key"),
  });
});
diagnostics.subscribe("http.client.request.created", ({ request }) => {
  const key = request.getHeader("idempotency-key");
  post(invocation.getStore(), {
    via: "node:http",
    method: request.method,
    origin: `${request.protocol}//${request.getHeader("host") ?? request.host}`,
    path: request.path,
    idempotencyKey: key === undefined ? undefined : String(key),
  });
});

/** A header of an undici request: its headers are a flat [name, value, ...] array, or raw header lines. */
function undiciHeader(headers, name) {
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2)
      if (String(headers[i]).toLowerCase() === name) return String(headers[i + 1]);
    return undefined;
  }
  for (const line of String(headers ?? "").split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === name) return line.slice(colon + 1).trim();
  }
  return undefined;
}
// The code V8 compiled for the package's modules, kept on disk and shared by the function's sandboxes:
// every cold start (a new sandbox for concurrency, or after a timeout, §9.1 item 6) compiled the same
// bundle again, the largest part of a sandbox's start after Node's own (docs/benchmarks/ceiling.md). It
// changes how fast the init phase runs here, not what it runs.
if (compileCache) module.enableCompileCache?.(compileCache);

/** The handler: as Lambda resolves the handler string in the package, or a module file's export (tests). */
async function load() {
  if (code.handler !== undefined) return loadHandler(code.taskRoot, code.handler);
  const module = await import(pathToFileURL(code.codeFile).href).catch((error) => {
    throw asLoadError(error);
  });
  const fn = module[code.handlerExport];
  if (typeof fn !== "function")
    throw runtimeError(
      "HandlerNotFound",
      `${code.codeFile} does not export a function "${code.handlerExport}"`,
    );
  return fn;
}

const loaded = load();
// The init phase (loading the code) is not part of an invocation's timeout, as in Lambda. An init error
// is logged as the runtime logs it, and every invocation of this sandbox fails with it.
loaded.then(
  () => {
    // Written now, not at the thread's exit: a sandbox destroyed after a timeout never exits cleanly.
    if (compileCache) module.flushCompileCache?.();
    parentPort.postMessage({ ready: true });
  },
  (error) => {
    logError("Uncaught Exception", error);
    parentPort.postMessage({
      ready: false,
      errorType: error?.name || "Error",
      errorMessage: String(error?.message ?? error),
    });
  },
);

parentPort.on("message", (message) => invocation.run(message.requestId, () => invoke(message)));

/** One invocation, run inside its own async context (`invocation`). */
async function invoke({ id, eventJson, deadline, requestId }) {
  const started = Date.now();
  const event = JSON.parse(eventJson);
  setRequestId(requestId);
  if (tracing) process.env._X_AMZN_TRACE_ID = traceHeader((bytes) => randomBytes(bytes).toString("hex"));
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: "$LATEST",
    invokedFunctionArn: functionArn,
    memoryLimitInMB: String(memoryMb),
    awsRequestId: requestId,
    logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME ?? `/aws/lambda/${functionName}`,
    logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME ?? `local/${process.pid}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
  try {
    const handler = await loaded;
    const payload = await handler(event, context);
    parentPort.postMessage({
      id,
      ok: true,
      // Lambda serialises the result as JSON; undefined becomes null.
      payload: JSON.stringify(payload ?? null),
      durationMs: Date.now() - started,
      heapUsedMb: getHeapStatistics().used_heap_size / 1_048_576,
      requestId,
    });
  } catch (error) {
    logError("Invoke Error", error);
    parentPort.postMessage({
      id,
      ok: false,
      errorType: error?.name || "Error",
      errorMessage: error?.message || String(error),
      durationMs: Date.now() - started,
      heapUsedMb: getHeapStatistics().used_heap_size / 1_048_576,
      requestId,
    });
  }
}
