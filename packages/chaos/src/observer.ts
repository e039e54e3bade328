/**
 * What the mappings hand the functions, seen at the same place the injector stands: the processor's
 * first delivery of each record (delivery order per key, §1.2), the fifo-worker's of each job (stalls),
 * and dlq-redrive's failure records, which name the ranges the Kinesis mapping gave up on (§1.6). The
 * failure queue is dlq-redrive's to consume, so the ledger reads it here instead of receiving from it.
 */
import type { FunctionName, InvokeFunction } from "@mcp-pipeline/local-pipeline";
import { failureRangeOf } from "./failure-range.js";
import type { Ledger } from "./ledger.js";

interface Records {
  readonly Records?: readonly {
    readonly kinesis?: { readonly sequenceNumber?: string };
    readonly messageId?: string;
    readonly body?: string;
  }[];
}

function callIdOf(body: string): string | undefined {
  try {
    const callId = (JSON.parse(body) as { callId?: unknown }).callId;
    return typeof callId === "string" ? callId : undefined;
  } catch {
    return undefined;
  }
}

export function observeInvocations(
  ledger: Ledger,
): (name: FunctionName, invoke: InvokeFunction) => InvokeFunction {
  return (name, invoke) => async (event) => {
    const records = (event as Records).Records ?? [];
    const now = Date.now();
    if (name === "processor") {
      ledger.processorDelivered(
        records.map((r) => r.kinesis?.sequenceNumber ?? ""),
        now,
      );
    } else if (name === "fifo-worker") {
      ledger.fifoDelivered(
        records.flatMap((r) => callIdOf(r.body ?? "") ?? []),
        now,
      );
    } else if (name === "dlq-redrive") {
      for (const r of records) {
        // A body that is no failure record names no range: dlq-redrive sets it aside itself.
        const range = failureRangeOf(r.body ?? "");
        if (range) ledger.failureRange(r.messageId ?? "", range);
      }
    }
    return invoke(event);
  };
}
