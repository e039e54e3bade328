/**
 * `arn:partition:service:region:account-id:resource` (IAM User Guide, "Amazon Resource Names (ARNs)",
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference-arns.html). Region and account are empty
 * for some services (S3, IAM); the resource may itself hold colons and slashes
 * (`function:name:alias`, `stream/name/consumer/c:1`), so it is everything after the fifth colon.
 */
export interface Arn {
  readonly partition: string;
  readonly service: string;
  readonly region: string;
  readonly accountId: string;
  readonly resource: string;
}

/** How much of what it was given the message repeats: more than any stream's or queue's ARN. */
const ARN_ECHO_MAX = 256;

/** Not an ARN, or not one of the kind asked for; `arn` is the input as given, `reason` says what is wrong. */
export class InvalidArnError extends Error {
  readonly arn: string;
  readonly reason: string;

  constructor(arn: string, reason: string) {
    // An ARN read from input (a record's eventSourceARN) may be of any length: the message names its start.
    super(
      `${JSON.stringify(arn.length > ARN_ECHO_MAX ? `${arn.slice(0, ARN_ECHO_MAX)}…` : arn)} is not ${reason}`,
    );
    this.name = "InvalidArnError";
    this.arn = arn;
    this.reason = reason;
  }
}

export function parseArn(arn: string): Arn {
  const parts = arn.split(":");
  if (parts.length < 6 || parts[0] !== "arn") {
    throw new InvalidArnError(arn, "an ARN (arn:partition:service:region:account-id:resource)");
  }
  const [, partition = "", service = "", region = "", accountId = ""] = parts;
  const resource = parts.slice(5).join(":");
  if (!/^aws(-[a-z]+)*$/.test(partition)) throw new InvalidArnError(arn, "an ARN: no AWS partition");
  if (service === "") throw new InvalidArnError(arn, "an ARN: no service");
  if (resource === "") throw new InvalidArnError(arn, "an ARN: no resource");
  return { partition, service, region, accountId, resource };
}
