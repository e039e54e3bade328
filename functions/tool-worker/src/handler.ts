// The core is @mcp-pipeline/worker's; what is this function's own is the tools it runs: the catalogue's,
// configured from the environment, with validators compiled at build time.
import { consumerHandler } from "@mcp-pipeline/batch/consumer-shell";
import { catalogueRegistry } from "@mcp-pipeline/tools";
import { QueueMode, workerConsumer } from "@mcp-pipeline/worker";
import { toolWorkerConfigSchema } from "./config.js";

/** SQS standard queue -> tools: messages independently, up to WORKER_CONCURRENCY at once (§2). */
export const handler = consumerHandler(
  workerConsumer({
    service: "tool-worker",
    mode: QueueMode.Standard,
    config: toolWorkerConfigSchema,
    registry: catalogueRegistry,
  }),
);
