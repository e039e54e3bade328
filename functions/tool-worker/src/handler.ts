import { consumerHandler } from "@mcp-pipeline/consumer-shell";
import { QueueMode, workerConsumer } from "@mcp-pipeline/worker";
import { toolWorkerConfigSchema } from "./config.js";
import { toolRegistry } from "./core.js";

/** SQS standard queue -> tools: messages independently, up to WORKER_CONCURRENCY at once (§2). */
export const handler = consumerHandler(
  workerConsumer({
    service: "tool-worker",
    mode: QueueMode.Standard,
    config: toolWorkerConfigSchema,
    registry: toolRegistry,
  }),
);
