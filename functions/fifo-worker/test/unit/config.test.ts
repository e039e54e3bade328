// The worker's settings and the tools' together: what they read and what they refuse (packages/worker/test).
import { workerFunctionConfigSuite } from "../../../../packages/worker/test/config-cases.js";
import { fifoWorkerConfigSchema } from "../../src/config.js";

workerFunctionConfigSuite("fifo-worker", fifoWorkerConfigSchema);
