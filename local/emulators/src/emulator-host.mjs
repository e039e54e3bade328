// Hosts one emulator in its own thread, so that the emulators and the pollers do not share one event
// loop: on a small machine the emulators' CPU time is what bounds a local run.
import { subscribe } from "node:diagnostics_channel";
import { performance } from "node:perf_hooks";
import { parentPort, workerData } from "node:worker_threads";

const { kind, delays = {} } = workerData;

// Requests answered, by operation (the X-Amz-Target of a JSON API call; for S3 the method, and
// "object" or "bucket"): what the local pipeline's benchmark reports per input and per emulator.
const requests = new Map();
subscribe("http.server.request.start", ({ request }) => {
  const target = request.headers["x-amz-target"];
  const operation =
    typeof target === "string"
      ? target.slice(target.indexOf(".") + 1)
      : `S3 ${request.method} ${/^\/[^/?]+\/[^?]/.test(request.url ?? "") ? "object" : "bucket"}`;
  requests.set(operation, (requests.get(operation) ?? 0) + 1);
});

let server;
if (kind === "dynamodb") {
  const { createDynamoDbServer } = await import("./dynamodb-server.mjs");
  server = createDynamoDbServer(delays.dynamodb);
} else if (kind === "kinesis") {
  const { default: kinesalite } = await import("kinesalite");
  server = kinesalite({
    createStreamMs: 0,
    deleteStreamMs: 0,
    updateStreamMs: 0,
    shardLimit: 100,
    ...delays.kinesis,
  });
}
if (server) {
  server.listen(0, "127.0.0.1", () =>
    parentPort.postMessage({ endpoint: `http://127.0.0.1:${server.address().port}` }),
  );
} else {
  const { startFauxqsWithS3Fidelity } = await import("./fauxqs-s3.mjs");
  const fauxqs = await startFauxqsWithS3Fidelity();
  server = { close: (done) => fauxqs.stop().then(() => done()), closeAllConnections: () => {} };
  parentPort.postMessage({ endpoint: fauxqs.address });
}
parentPort.on("message", (message) => {
  if (message === "requests") {
    parentPort.postMessage({ requests: Object.fromEntries(requests) });
    return;
  }
  // How long this thread's event loop has been busy (not waiting for I/O), in ms: the emulator's own
  // share of a run, which the ceiling benchmark compares with its client's.
  if (message === "busy") {
    parentPort.postMessage({ busy: performance.eventLoopUtilization().active });
    return;
  }
  if (message !== "stop") return;
  server.closeAllConnections?.();
  server.close(() => parentPort.postMessage({ stopped: true }));
});
