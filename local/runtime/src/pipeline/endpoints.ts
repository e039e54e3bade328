/** The four services' endpoints, as the standard AWS_ENDPOINT_URL_* variables name them. */

export interface Endpoints {
  readonly dynamodb: string;
  readonly kinesis: string;
  readonly sqs: string;
  readonly s3: string;
}

/** Reads endpoints from the standard variables; undefined unless all four services resolve. */
export function endpointsFromEnvironment(env: NodeJS.ProcessEnv): Endpoints | undefined {
  const of = (service: string) => env[`AWS_ENDPOINT_URL_${service}`] ?? env.AWS_ENDPOINT_URL;
  const [dynamodb, kinesis, sqs, s3] = [of("DYNAMODB"), of("KINESIS"), of("SQS"), of("S3")];
  if (!dynamodb || !kinesis || !sqs || !s3) return undefined;
  return { dynamodb, kinesis, sqs, s3 };
}
