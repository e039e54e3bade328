import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { type ConfigSchema, loadConfig } from "@mcp-pipeline/aws";
import {
  type BatchItemFailure,
  type BatchOutcome,
  failureDetails,
  InvalidEventError,
  type PartialBatchResponse,
} from "@mcp-pipeline/batch";
import type { Context } from "aws-lambda";
import type { RecordSource } from "./records.js";

/** The Powertools units the consumers publish (their values are MetricUnit's). */
export type MetricUnitName = "Count" | "Milliseconds";
/** A batch's metrics by name, in the order they are published. */
export type MetricValues = Readonly<Record<string, readonly [unit: MetricUnitName, value: number]>>;

/** What the shell gives the wiring: the sandbox's logger and the function's name. */
export interface Sandbox {
  readonly logger: Logger;
  readonly functionName: string;
}

/** What a core answers for a batch: the partial batch response, its counts, and each record's outcome. */
export interface BatchResult<R, S> {
  readonly response: PartialBatchResponse;
  readonly summary: S;
  readonly outcome: BatchOutcome<R>;
}

/** How a batch is reported: the log messages and the metrics of its summary. */
export interface BatchReport<S> {
  /** Logged at error level for each record reported for retry, with the record's identity and cause. */
  readonly failure: string;
  /** Logged at info level once per batch, with the summary and the response. */
  readonly summary: string;
  readonly metrics: (summary: S) => MetricValues;
}

/** An invocation by hand (console, `aws lambda invoke`): its payload is an action, not a batch. */
export interface ManualActions<D, A extends { readonly action: string }> {
  /** Reads the payload; throws InvalidEventError when it is no action. Runs before the configuration loads. */
  readonly parse: (event: unknown) => A;
  readonly run: (action: A, deps: D) => Promise<unknown>;
}

/** A consumer: its configuration, its wiring, its core and how its batches are reported. */
export interface Consumer<C, D, R, S extends object, A extends { readonly action: string } = never> {
  /** Powertools service name and metric dimension, e.g. `processor`. */
  readonly service: string;
  readonly config: ConfigSchema<C>;
  readonly records: RecordSource<R>;
  /** Builds the core's dependencies (clients, stores) from the configuration, once per sandbox. */
  readonly wire: (config: C, sandbox: Sandbox) => D;
  /** The core: every record of the batch to an outcome. */
  readonly process: (records: readonly R[], context: Context, deps: D) => Promise<BatchResult<R, S>>;
  readonly report: BatchReport<S>;
  /** Without it, an event that is not a batch is refused with InvalidEventError. */
  readonly manual?: ManualActions<D, A>;
}

/** The partial batch response as Lambda reads it (§1.4, §2.3). */
export interface LambdaBatchResponse {
  batchItemFailures: BatchItemFailure[];
}

export type ConsumerHandler<Manual = never> = (
  event: unknown,
  context: Context,
) => Promise<LambdaBatchResponse | Manual>;

function isBatch(event: unknown): event is { Records: unknown[] } {
  return (
    typeof event === "object" && event !== null && Array.isArray((event as { Records?: unknown }).Records)
  );
}

/**
 * The Lambda handler of a consumer, the same shell for every function: a logger and metrics per
 * sandbox; the configuration and the wiring built on the first invocation and reused while the sandbox
 * lives; each batch through the core, each failure logged with its record's identity, the summary
 * logged and its metrics flushed, and the partial batch response returned.
 *
 * A bad configuration is a ConfigError on every invocation (never cached: the next one reads it again),
 * so the function fails loudly with every bad setting named instead of misbehaving per record. An event
 * that is neither a batch nor a manual action is an InvalidEventError: nothing can be acknowledged.
 */
export function consumerHandler<C, D, R, S extends object, A extends { readonly action: string } = never>(
  consumer: Consumer<C, D, R, S, A>,
): ConsumerHandler<[A] extends [never] ? never : unknown> {
  // The SDK reads AWS_ENDPOINT_URL_* and credentials from process.env itself; config comes from the same place.
  const env = process.env;
  const logger = new Logger({ serviceName: consumer.service });
  const metrics = new Metrics({
    serviceName: consumer.service,
    namespace: env.METRICS_NAMESPACE ?? "McpPipeline",
  });
  let built: D | undefined;
  const dependencies = (context: Context): D => {
    built ??= consumer.wire(loadConfig(consumer.config, env), { logger, functionName: context.functionName });
    return built;
  };

  const handler: ConsumerHandler<unknown> = async (event, context) => {
    logger.addContext(context);
    if (!isBatch(event)) {
      if (consumer.manual === undefined) {
        throw new InvalidEventError(`expected ${consumer.records.event} with a Records array`);
      }
      const action = consumer.manual.parse(event);
      const result = await consumer.manual.run(action, dependencies(context));
      logger.info("manual action done", { action: action.action, result });
      return result;
    }
    const records = event.Records as R[];
    const { response, summary, outcome } = await consumer.process(records, context, dependencies(context));
    for (const failure of failureDetails(outcome, consumer.records.identify)) {
      logger.error(consumer.report.failure, failure);
    }
    logger.info(consumer.report.summary, { ...summary, batchItemFailures: response.batchItemFailures });
    for (const [name, [unit, value]] of Object.entries(consumer.report.metrics(summary))) {
      metrics.addMetric(name, unit, value);
    }
    metrics.publishStoredMetrics();
    return { batchItemFailures: [...response.batchItemFailures] };
  };
  // Only a consumer with manual actions answers anything but a batch response.
  return handler as ConsumerHandler<[A] extends [never] ? never : unknown>;
}
