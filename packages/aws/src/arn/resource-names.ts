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

/**
 * The queue URL of an SQS queue ARN, `https://sqs.<region>.<domain>/<account>/<name>` (SQS Developer
 * Guide, "Amazon SQS queue and message identifiers"): what SQS's API takes where the Lambda event gives
 * the ARN (`eventSourceARN`, docs/aws-semantics.md §2.4). SDK clients send it to their own endpoint
 * (`useQueueUrlAsEndpoint: false`), so the host only has to name the region.
 */
export function queueUrlOfArn(arn: string): string {
  const name = queueNameOfArn(arn);
  const { partition, region, accountId } = parseArn(arn);
  if (region === "" || !/^\d{12}$/.test(accountId)) {
    throw new InvalidArnError(arn, "an SQS queue ARN with a region and a 12-digit account");
  }
  const domain = partition === "aws-cn" ? "amazonaws.com.cn" : "amazonaws.com";
  return `https://sqs.${region}.${domain}/${accountId}/${name}`;
}
