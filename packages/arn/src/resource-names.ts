import { InvalidArnError, parseArn } from "./parse-arn.js";

/**
 * The stream's name in a Kinesis stream ARN (`…:stream/<name>`) or in the ARN of one of its consumers
 * (`…:stream/<name>/consumer/<consumer>:<created>`).
 */
export function streamNameOfArn(arn: string): string {
  const { service, resource } = parseArn(arn);
  const [type, name] = resource.split("/");
  if (service !== "kinesis" || type !== "stream" || !name) {
    throw new InvalidArnError(arn, "a Kinesis stream ARN (arn:aws:kinesis:region:account:stream/name)");
  }
  return name;
}

/** The queue's name in an SQS queue ARN (`arn:aws:sqs:<region>:<account>:<name>`). */
export function queueNameOfArn(arn: string): string {
  const { service, resource } = parseArn(arn);
  if (service !== "sqs" || resource.includes(":") || resource.includes("/")) {
    throw new InvalidArnError(arn, "an SQS queue ARN (arn:aws:sqs:region:account:name)");
  }
  return resource;
}
