// The core is @mcp-pipeline/worker's; what is this function's own is the tools it runs: the catalogue's,
// configured from the environment, with validators compiled at build time.
import { consumerHandler } from "@mcp-pipeline/batch/consumer-shell";
import { catalogueRegistry } from "@mcp-pipeline/tools";
import { QueueMode, workerConsumer } from "@mcp-pipeline/worker";
import { fifoWorkerConfigSchema } from "./config.js";

/** SQS FIFO queue -> tools: message groups (sessions) concurrently, each in order (§3). */
export const handler = consumerHandler(
  workerConsumer({
    service: "fifo-worker",
    mode: QueueMode.Fifo,
    config: fifoWorkerConfigSchema,
    registry: catalogueRegistry,
  }),
);
