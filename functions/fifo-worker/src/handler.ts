import { consumerHandler } from "@mcp-pipeline/consumer-shell";
import { QueueMode, workerConsumer } from "@mcp-pipeline/worker";
import { fifoWorkerConfigSchema } from "./config.js";
import { toolRegistry } from "./core.js";

/** SQS FIFO queue -> tools: message groups (sessions) concurrently, each in order (§3). */
export const handler = consumerHandler(
  workerConsumer({
    service: "fifo-worker",
    mode: QueueMode.Fifo,
    config: fifoWorkerConfigSchema,
    registry: toolRegistry,
  }),
);
