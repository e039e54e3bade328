/**
 * What Lambda itself does with a function's execution role, besides the function's code
 * (docs/aws-semantics.md §11): its event source mappings poll their source with it and send the
 * on-failure record with it, and the runtime writes the function's logs and traces with it. Read from the
 * deployed function, so that a mapping or a destination added in Terraform brings its permissions with it.
 */
import type { DeployedFunction } from "./terraform-state.ts";

/** One permission a function's role needs on one resource, and why. */
export interface Need {
  readonly action: string;
  /** A concrete ARN (or `*` where AWS has no resource type). */
  readonly resource: string;
  readonly why: string;
}

/** §11: what Lambda's Kinesis mapping calls on the stream (AWSLambdaKinesisExecutionRole's read actions). */
export const KINESIS_MAPPING_ACTIONS = [
  "kinesis:DescribeStream",
  "kinesis:DescribeStreamSummary",
  "kinesis:GetRecords",
  "kinesis:GetShardIterator",
  "kinesis:ListShards",
  "kinesis:SubscribeToShard",
] as const;
/** §11: on an enhanced fan-out consumer, the mapping describes it and subscribes through it. */
export const CONSUMER_MAPPING_ACTIONS = [
  "kinesis:DescribeStreamConsumer",
  "kinesis:SubscribeToShard",
] as const;
/** §11: what Lambda's SQS mapping calls on the queue. */
export const SQS_MAPPING_ACTIONS = [
  "sqs:ReceiveMessage",
  "sqs:DeleteMessage",
  "sqs:GetQueueAttributes",
] as const;

/** `arn:aws:kinesis:r:a:stream/s/consumer/c:123` -> its stream's ARN. */
const streamOfConsumer = (arn: string) => arn.slice(0, arn.indexOf("/consumer/"));

export function lambdaNeeds(fn: DeployedFunction): Need[] {
  const needs: Need[] = [];
  const add = (actions: readonly string[], resource: string, why: string) => {
    for (const action of actions) needs.push({ action, resource, why });
  };
  for (const mapping of fn.mappings) {
    const source = mapping.source;
    if (source.startsWith("arn:") && source.includes(":sqs:")) {
      add(SQS_MAPPING_ACTIONS, source, "Lambda's SQS mapping polls its queue (§11)");
    } else if (source.includes(":kinesis:") && source.includes("/consumer/")) {
      add(
        KINESIS_MAPPING_ACTIONS,
        streamOfConsumer(source),
        "Lambda's Kinesis mapping reads the stream (§11)",
      );
      add(
        CONSUMER_MAPPING_ACTIONS,
        source,
        "Lambda's mapping reads through its enhanced fan-out consumer (§11)",
      );
    } else if (source.includes(":kinesis:")) {
      add(KINESIS_MAPPING_ACTIONS, source, "Lambda's Kinesis mapping reads the stream (§11)");
    } else {
      needs.push({
        action: "(unknown)",
        resource: source,
        why: "a mapping of a kind the check does not know",
      });
    }
    if (mapping.onFailure !== undefined)
      add(["sqs:SendMessage"], mapping.onFailure, "Lambda sends the mapping's on-failure records (§1.6)");
  }
  if (fn.logGroupArn !== undefined)
    add(
      ["logs:CreateLogStream", "logs:PutLogEvents"],
      `${fn.logGroupArn}:*`,
      "the function's own logs (§11)",
    );
  if (fn.tracing)
    add(
      ["xray:PutTraceSegments", "xray:PutTelemetryRecords"],
      "*",
      "active tracing; X-Ray has no resource types (§11)",
    );
  return needs;
}
