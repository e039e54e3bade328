// Hosts fauxqs with SQLite persistence in its own thread (as local/emulators hosts each emulator), so
// that its writes do not share the event loop of the mappings and the doors.
import { parentPort, workerData } from "node:worker_threads";
import { startFauxqs } from "fauxqs";
import { patchFauxqsFifoBatches } from "./fauxqs-fifo-batches.mjs";
import { patchFauxqsVisibleAgain } from "./fauxqs-visible-again.mjs";

patchFauxqsVisibleAgain();
patchFauxqsFifoBatches();

const fauxqs = await startFauxqs({ port: 0, host: "127.0.0.1", logger: false, dataDir: workerData.dataDir });
parentPort.postMessage({ endpoint: fauxqs.address });
parentPort.on("message", (message) => {
  if (message === "stop") void fauxqs.stop().then(() => parentPort.postMessage({ stopped: true }));
});
