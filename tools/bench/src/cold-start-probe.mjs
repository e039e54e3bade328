// One cold start, run by tools/bench/src/cold-start.ts in a fresh Node process per measurement:
// imports a bundle's index.mjs (Lambda's init phase, without the runtime's own start), then, when an
// event file is given, invokes the handler once. Plain JavaScript so that nothing (no tsx loader)
// stands between the process and the bundle. Prints one line: `COLD_START {json}`.
//   node cold-start-probe.mjs <index.mjs> [event.json]
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [file, eventFile] = process.argv.slice(2);
const cpuBefore = process.cpuUsage();
const started = performance.now();
const bundle = await import(pathToFileURL(file).href);
const importMs = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
const result = { importMs, importCpuMs: (cpu.user + cpu.system) / 1000 };
if (eventFile) {
  const event = JSON.parse(readFileSync(eventFile, "utf8"));
  const invoked = Date.now();
  const context = {
    callbackWaitsForEmptyEventLoop: false,
    functionName: "cold-start-bench",
    functionVersion: "$LATEST",
    invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:cold-start-bench",
    memoryLimitInMB: "512",
    awsRequestId: `cold-start-${process.pid}`,
    logGroupName: "/aws/lambda/cold-start-bench",
    logStreamName: "bench",
    getRemainingTimeInMillis: () => Math.max(0, 60_000 - (Date.now() - invoked)),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
  const begin = performance.now();
  const response = await bundle.handler(event, context);
  result.invokeMs = performance.now() - begin;
  result.response = response;
}
process.stdout.write(`\nCOLD_START ${JSON.stringify(result)}\n`);
