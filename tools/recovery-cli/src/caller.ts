/**
 * Who is acting, and where: the caller's account (STS GetCallerIdentity) and region, held against the
 * accounts and regions of what a command is about to change, so a stale variable cannot act on another
 * environment's resources.
 */
import { HeadBucketCommand, type S3Client } from "@aws-sdk/client-s3";
import { GetCallerIdentityCommand, type STSClient } from "@aws-sdk/client-sts";
import { InvalidArnError, parseArn } from "@mcp-pipeline/aws/arn";
import { type Check, failed, notChecked, passed } from "@mcp-pipeline/recovery";

export interface Caller {
  readonly account: string;
  /** The identity's ARN (user, role session). */
  readonly arn: string;
  /** The region the command's clients reach (AWS_REGION). */
  readonly region: string;
}

/** The caller's account could not be learnt: nothing that changes state may run (`reason` says why). */
export class CallerUnknownError extends Error {
  readonly reason: string;

  constructor(reason: string, options?: ErrorOptions) {
    super(`cannot tell which account the credentials act in: ${reason}`, options);
    this.name = "CallerUnknownError";
    this.reason = reason;
  }
}

/** STS GetCallerIdentity: needs no permission, answers for any valid credentials. */
export async function callerIdentity(sts: STSClient, unreachable?: string): Promise<Caller> {
  if (unreachable !== undefined)
    throw new CallerUnknownError(`${unreachable}; set it (the local stack's is its SQS endpoint)`);
  try {
    const identity = await sts.send(new GetCallerIdentityCommand({}));
    return {
      account: identity.Account ?? "",
      arn: identity.Arn ?? "",
      region: await sts.config.region(),
    };
  } catch (error) {
    throw new CallerUnknownError(
      `STS GetCallerIdentity failed: ${(error as Error).name}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/**
 * One check per resource: its ARN's account (and region, where the ARN says the region a client
 * reached) is the caller's. `what` names the resource as the command line did (`--from`, "the stream").
 */
export function environmentChecks(
  caller: Caller,
  resources: readonly { readonly what: string; readonly arn: string; readonly region?: boolean }[],
): Check[] {
  return resources.map(({ what, arn, region = true }) => {
    let parsed: ReturnType<typeof parseArn>;
    try {
      parsed = parseArn(arn);
    } catch (error) {
      if (error instanceof InvalidArnError) return failed(`${what}: account`, error.message);
      throw error;
    }
    if (parsed.accountId !== caller.account)
      return failed(
        `${what}: account`,
        `${arn} belongs to account ${parsed.accountId}; the credentials act in account ${caller.account}`,
      );
    if (region && parsed.region !== caller.region)
      return failed(
        `${what}: region`,
        `${arn} is in region ${parsed.region}; the command acts in ${caller.region} (AWS_REGION)`,
      );
    return passed(
      `${what}: account`,
      `account ${caller.account}${region ? `, region ${caller.region}` : ""}`,
    );
  });
}

/**
 * The bucket is this account's: a name ending in an account id (terraform/modules/pipeline names buckets
 * `<prefix>-<suffix>-<account>`) must end in the caller's, and S3's answer of the bucket's region (HeadBucket
 * x-amz-bucket-region) must be the caller's region. Every S3 request of the run also carries the caller's
 * account as ExpectedBucketOwner, which S3 enforces (403) whatever the name.
 */
export async function bucketChecks(s3: S3Client, caller: Caller, bucket: string): Promise<Check[]> {
  const checks: Check[] = [];
  const suffix = /-(\d{12})$/.exec(bucket)?.[1];
  if (suffix !== undefined && suffix !== caller.account)
    checks.push(
      failed(
        "bucket: account",
        `${bucket} is named for account ${suffix}; the credentials act in account ${caller.account}`,
      ),
    );
  let region: string | undefined;
  try {
    region = (await s3.send(new HeadBucketCommand({ Bucket: bucket, ExpectedBucketOwner: caller.account })))
      .BucketRegion;
  } catch (error) {
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    return [
      ...checks,
      failed(
        "bucket",
        status === 404
          ? `${bucket} does not exist`
          : status === 403
            ? `${bucket} is not readable by the caller, or not owned by account ${caller.account}`
            : `HeadBucket ${bucket} failed: ${(error as Error).name}`,
      ),
    ];
  }
  if (region === undefined)
    checks.push(notChecked("bucket: region", `the endpoint did not say which region ${bucket} is in`));
  else if (region !== caller.region)
    checks.push(
      failed("bucket: region", `${bucket} is in region ${region}; the command acts in ${caller.region}`),
    );
  else checks.push(passed("bucket: region", `${bucket} is in ${region}`));
  if (suffix === caller.account)
    checks.push(passed("bucket: account", `${bucket} is named for account ${suffix}`));
  return checks;
}
