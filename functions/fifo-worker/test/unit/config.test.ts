// The worker's settings and the tools' together, held to the zod schema they replaced (packages/worker/test).
import { workerFunctionConfigSuite } from "../../../../packages/worker/test/config-reference.js";
import { fifoWorkerConfigSchema } from "../../src/config.js";

workerFunctionConfigSuite("fifo-worker", fifoWorkerConfigSchema);
