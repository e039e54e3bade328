import { PermanentError, TransientError } from "@mcp-pipeline/contracts";
import { defineTool } from "@mcp-pipeline/tools/registry";

export interface LatencyArgs {
  readonly latencyMs: number;
  /** Size of the result's payload: large values exercise the result store's S3 path. */
  readonly resultBytes?: number;
  /** Makes the call fail after its latency: how load and chaos scenarios inject failures. */
  readonly fail?: "transient" | "permanent";
  /** Fails transiently while the delivery attempt is at most this: a failure that a retry cures. */
  readonly failUntilAttempt?: number;
}

/** A latency tool for load tests: waits (abortably), then returns or fails as asked. */
export const latency = defineTool<LatencyArgs, { waitedMs: number; payload: string }>({
  name: "load.latency",
  description: "Waits latencyMs, then returns a payload of resultBytes, or fails as asked. For load tests.",
  inputSchema: {
    type: "object",
    properties: {
      latencyMs: { type: "integer", minimum: 0, maximum: 60_000 },
      resultBytes: { type: "integer", minimum: 0, maximum: 2_000_000 },
      fail: { enum: ["transient", "permanent"] },
      failUntilAttempt: { type: "integer", minimum: 0, maximum: 100 },
    },
    required: ["latencyMs"],
    additionalProperties: false,
  },
  timeoutMs: 30_000,
  concurrency: 32,
  run: async ({ latencyMs, resultBytes = 0, fail, failUntilAttempt = 0 }, { signal, attempt }) => {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, latencyMs);
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    });
    if (attempt <= failUntilAttempt) {
      throw new TransientError("injected-transient", `failure injected until attempt ${failUntilAttempt}`);
    }
    if (fail === "transient") throw new TransientError("injected-transient", "failure injected by the job");
    if (fail === "permanent") throw new PermanentError("injected-permanent", "failure injected by the job");
    return { waitedMs: latencyMs, payload: "x".repeat(resultBytes) };
  },
});
