/**
 * What terraform/modules declare for every resource of a kind, beyond an environment's settings: the
 * attributes of every queue (modules/queue/attributes.json) and the functions' log format
 * (modules/function/logging.json). Terraform reads the same files, so the local stack
 * (local/runtime) creates its queues and runs its functions with these values, not copies.
 */

import logging from "../../../terraform/modules/function/logging.json" with { type: "json" };
import queue from "../../../terraform/modules/queue/attributes.json" with { type: "json" };

export interface QueueAttributes {
  /** Long polling on every source queue. */
  readonly receiveWaitTimeSeconds: number;
  /** What a FIFO source queue gets besides: deduplication and throughput per message group. */
  readonly fifo: { readonly deduplicationScope: string; readonly fifoThroughputLimit: string };
}

export const QUEUE_ATTRIBUTES: QueueAttributes = {
  receiveWaitTimeSeconds: queue.receive_wait_time_seconds,
  fifo: {
    deduplicationScope: queue.fifo.deduplication_scope,
    fifoThroughputLimit: queue.fifo.fifo_throughput_limit,
  },
};

/**
 * Lambda's default application log level for the JSON format, which the function module leaves unset
 * (docs/aws-semantics.md §9.4).
 */
export const DEFAULT_APPLICATION_LOG_LEVEL = "INFO";

export interface FunctionLoggingDeclaration {
  readonly format: "JSON" | "Text";
  /** The JSON format's application log level (AWS_LAMBDA_LOG_LEVEL). */
  readonly applicationLogLevel?: string;
}

function logFormat(value: string): "JSON" | "Text" {
  if (value !== "JSON" && value !== "Text")
    throw new Error(`terraform/modules/function/logging.json: log_format must be JSON or Text, got ${value}`);
  return value;
}

export const FUNCTION_LOGGING: FunctionLoggingDeclaration =
  logFormat(logging.log_format) === "JSON"
    ? { format: "JSON", applicationLogLevel: DEFAULT_APPLICATION_LOG_LEVEL }
    : { format: "Text" };

/**
 * terraform/modules/function: `tracing_config { mode = "Active" }`, a literal there so that checkov sees
 * it (CKV_AWS_50); local/runtime/test/integration/local-stack-parity.test.ts holds this to it.
 */
export const FUNCTION_TRACING_ACTIVE = true;
