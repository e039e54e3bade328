/**
 * `lint:config --live`: the settings of a deployed environment, read through the AWS APIs instead of the
 * files, so the same rules check what is actually running (drift, console edits). Needs credentials
 * that may read Lambda, SQS and Kinesis configuration. Not exercised by the tests: there is no account
 * on the machines that run them.
 */
import { DescribeStreamSummaryCommand, KinesisClient } from "@aws-sdk/client-kinesis";
import {
  GetFunctionConcurrencyCommand,
  GetFunctionConfigurationCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
} from "@aws-sdk/client-lambda";
import { GetQueueAttributesCommand, GetQueueUrlCommand, SQSClient } from "@aws-sdk/client-sqs";
import { queueNameOfArn } from "@mcp-pipeline/arn";
import { type EnvironmentSettings, QUEUE_KEYS, resourceNames } from "@mcp-pipeline/settings";

/** The file's settings with every value AWS can report replaced by the deployed one. */
export async function liveSettings(file: EnvironmentSettings, region: string): Promise<EnvironmentSettings> {
  const lambda = new LambdaClient({ region });
  const sqs = new SQSClient({ region });
  const kinesis = new KinesisClient({ region });
  const names = resourceNames(file.name_prefix);
  const live = structuredClone(file) as EnvironmentSettings & Record<string, unknown>;

  const { StreamDescriptionSummary: stream } = await kinesis.send(
    new DescribeStreamSummaryCommand({ StreamName: names.stream }),
  );
  live.stream.retention_period_hours = stream?.RetentionPeriodHours ?? file.stream.retention_period_hours;

  const functionSettings = async (name: string) => {
    const fn = await lambda.send(new GetFunctionConfigurationCommand({ FunctionName: name }));
    const concurrency = await lambda.send(new GetFunctionConcurrencyCommand({ FunctionName: name }));
    const { EventSourceMappings = [] } = await lambda.send(
      new ListEventSourceMappingsCommand({ FunctionName: name }),
    );
    return { fn, reserved: concurrency.ReservedConcurrentExecutions ?? null, esm: EventSourceMappings[0] };
  };

  const processor = await functionSettings(names.functions.processor);
  live.processor.timeout_seconds = processor.fn.Timeout ?? file.processor.timeout_seconds;
  live.processor.reserved_concurrency = processor.reserved;
  if (processor.esm) {
    const e = processor.esm;
    live.processor.esm = {
      ...file.processor.esm,
      batch_size: e.BatchSize ?? file.processor.esm.batch_size,
      maximum_batching_window_in_seconds: e.MaximumBatchingWindowInSeconds ?? 0,
      parallelization_factor: e.ParallelizationFactor ?? 1,
      maximum_retry_attempts: e.MaximumRetryAttempts ?? -1,
      maximum_record_age_in_seconds: e.MaximumRecordAgeInSeconds ?? -1,
      bisect_batch_on_function_error: e.BisectBatchOnFunctionError ?? false,
      report_batch_item_failures: (e.FunctionResponseTypes ?? []).includes("ReportBatchItemFailures"),
      on_failure_destination: Boolean(e.DestinationConfig?.OnFailure?.Destination),
    };
  }

  for (const queue of QUEUE_KEYS) {
    const { name: queueName, consumer } = names.queues[queue];
    const deployed = await functionSettings(names.functions[consumer]).catch(() => undefined);
    if (!deployed) continue;
    const target = live[consumer];
    target.timeout_seconds = deployed.fn.Timeout ?? target.timeout_seconds;
    target.reserved_concurrency = deployed.reserved;
    if (deployed.esm) {
      target.esm = {
        batch_size: deployed.esm.BatchSize ?? target.esm.batch_size,
        maximum_batching_window_in_seconds: deployed.esm.MaximumBatchingWindowInSeconds ?? 0,
        maximum_concurrency: deployed.esm.ScalingConfig?.MaximumConcurrency ?? null,
        report_batch_item_failures: (deployed.esm.FunctionResponseTypes ?? []).includes(
          "ReportBatchItemFailures",
        ),
      };
    }
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: queueName }));
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl,
        AttributeNames: ["VisibilityTimeout", "MessageRetentionPeriod", "RedrivePolicy"],
      }),
    );
    const redrive = JSON.parse(Attributes.RedrivePolicy ?? "{}") as {
      deadLetterTargetArn?: string;
      maxReceiveCount?: number;
    };
    const dlqName = redrive.deadLetterTargetArn && queueNameOfArn(redrive.deadLetterTargetArn);
    const dlq = dlqName
      ? await sqs
          .send(new GetQueueUrlCommand({ QueueName: dlqName }))
          .then(({ QueueUrl: url }) =>
            sqs.send(
              new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["MessageRetentionPeriod"] }),
            ),
          )
      : undefined;
    target.queue = {
      visibility_timeout_seconds: Number(Attributes.VisibilityTimeout ?? 30),
      message_retention_seconds: Number(Attributes.MessageRetentionPeriod ?? 345_600),
      max_receive_count: redrive.maxReceiveCount ?? 0,
      dlq_message_retention_seconds: Number(dlq?.Attributes?.MessageRetentionPeriod ?? 0),
    };
  }
  // Test tools are on where a deployed worker's environment says so, whatever the file says.
  const workers = await Promise.all(
    (["tool_worker", "fifo_worker"] as const).map((key) =>
      lambda
        .send(new GetFunctionConfigurationCommand({ FunctionName: names.functions[key] }))
        .catch(() => undefined),
    ),
  );
  live.test_tools = workers.some((w) => w?.Environment?.Variables?.TEST_TOOLS === "on");
  for (const client of [lambda, sqs, kinesis]) client.destroy();
  return live;
}
