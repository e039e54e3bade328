/**
 * The faults that stand in for the Lambda service between a mapping and its function: throttles (the
 * function does not run), handler exceptions and timeouts (the function ran, its answer is an error).
 * The dlq-redrive function is spared: it is the recovery path that the ledger's replay relies on, and
 * its own retries are SQS's (docs/aws-semantics.md §2.3), which the workers' faults exercise already.
 */
import type { FunctionName, InvokeFunction, InvokeResult } from "@mcp-pipeline/local-runtime";
import { sleep } from "@mcp-pipeline/retry";
import type { FaultPlan } from "./plan.js";

export interface InvocationFaultCounts {
  throttles: number;
  exceptions: number;
  timeouts: number;
}

const FAULTED: ReadonlySet<FunctionName> = new Set(["processor", "tool-worker", "fifo-worker"]);

function functionError(errorType: string, errorMessage: string, timedOut: boolean): InvokeResult {
  return { kind: "function-error", errorType, errorMessage, timedOut, durationMs: 0, requestId: "" };
}

export function invocationFaults(
  plan: FaultPlan,
  active: () => boolean,
  counts: InvocationFaultCounts,
  onFault: () => void = () => {},
): (name: FunctionName, invoke: InvokeFunction) => InvokeFunction {
  return (name, invoke) => {
    if (!FAULTED.has(name)) return invoke;
    return async (event) => {
      if (active() && plan.draw("throttle")) {
        counts.throttles += 1;
        onFault();
        if (name !== "processor")
          // SQS: the batch goes back to the queue after its visibility timeout and has used a receive
          // (§5, §2.3); the mapping sees a failed invoke and deletes nothing.
          return functionError(
            "TooManyRequestsException",
            "Rate exceeded (injected by npm run chaos)",
            false,
          );
        // Kinesis: a throttled invoke is retried by the mapping without using a retry attempt, bounded
        // only by record age and retention (§1.3, §5): the local mapping has no throttles, so the retry
        // is made here, after a short wait, until the draw lets the invoke through.
        for (let attempt = 1; active() && plan.draw("throttle"); attempt++) {
          counts.throttles += 1;
          onFault();
          await sleep(Math.min(1_000, 20 * 2 ** attempt));
        }
        await sleep(20);
      }
      const result = await invoke(event);
      if (result.kind !== "ok" || !active()) return result;
      if (plan.draw("exception")) {
        // The handler threw after its work: the effects are done and the mapping retries the batch,
        // so idempotency must make the second delivery change nothing (§1.3, §2.3).
        counts.exceptions += 1;
        onFault();
        return functionError("Error", "handler exception (injected by npm run chaos)", false);
      }
      if (plan.draw("timeout")) {
        // The invocation ran past its timeout: Lambda counts it as a function error (§1.3, §6), and
        // what the handler did before the cut stays done.
        counts.timeouts += 1;
        onFault();
        return functionError("Sandbox.Timedout", "Task timed out (injected by npm run chaos)", true);
      }
      return result;
    };
  };
}
