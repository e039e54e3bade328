// One Lambda sandbox: a worker thread that loads the function's code once and runs one invocation at a
// time, like a Lambda execution environment. Plain JavaScript so that it loads without a TypeScript loader.
import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";
import { getHeapStatistics } from "node:v8";
import { parentPort, workerData } from "node:worker_threads";

const { codeFile, handlerExport, functionName, memoryMb, functionArn } = workerData;
const loaded = import(pathToFileURL(codeFile).href);
// The init phase (loading the code) is not part of an invocation's timeout, as in Lambda.
loaded.then(
  () => parentPort.postMessage({ ready: true }),
  (error) =>
    parentPort.postMessage({
      ready: false,
      errorType: error?.name || "Error",
      errorMessage: String(error?.message ?? error),
    }),
);

parentPort.on("message", async ({ id, eventJson, deadline }) => {
  const started = Date.now();
  const event = JSON.parse(eventJson);
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: "$LATEST",
    invokedFunctionArn: functionArn,
    memoryLimitInMB: String(memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/${process.pid}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
  try {
    const module = await loaded;
    const handler = module[handlerExport];
    if (typeof handler !== "function") {
      throw Object.assign(new Error(`${codeFile} does not export a function "${handlerExport}"`), {
        name: "Runtime.HandlerNotFound",
      });
    }
    const payload = await handler(event, context);
    parentPort.postMessage({
      id,
      ok: true,
      // Lambda serialises the result as JSON; undefined becomes null.
      payload: JSON.stringify(payload ?? null),
      durationMs: Date.now() - started,
      heapUsedMb: getHeapStatistics().used_heap_size / 1_048_576,
      requestId: context.awsRequestId,
    });
  } catch (error) {
    parentPort.postMessage({
      id,
      ok: false,
      errorType: error?.name || "Error",
      errorMessage: error?.message || String(error),
      durationMs: Date.now() - started,
      heapUsedMb: getHeapStatistics().used_heap_size / 1_048_576,
      requestId: context.awsRequestId,
    });
  }
});
