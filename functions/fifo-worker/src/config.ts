import * as s from "@mcp-pipeline/contracts/light-schema";
import { toolsConfigSchema } from "@mcp-pipeline/tools";
import { workerConfigSchema } from "@mcp-pipeline/worker/config";

/**
 * fifo-worker's environment, set by terraform/modules/function and by the local runtime: the worker's settings
 * (packages/worker/src/config.ts) and those of the tools it runs (packages/tools/src/config.ts).
 */
export const fifoWorkerConfigSchema = s.object({
  ...workerConfigSchema("fifo_worker").shape,
  ...toolsConfigSchema.shape,
});

export type FifoWorkerConfig = s.Output<typeof fifoWorkerConfigSchema.shape>;
