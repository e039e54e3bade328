import { createWorkerHandler, QueueMode } from "@mcp-pipeline/worker";

/** Lambda entry point (`index.handler` in the bundle). Configuration: packages/worker/src/config.ts. */
export const handler = createWorkerHandler({ service: "tool-worker", mode: QueueMode.Standard });
