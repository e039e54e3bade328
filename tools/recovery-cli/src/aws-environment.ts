/**
 * The AWS clients of one run, built from the environment the command was given (not from whatever the
 * process happens to hold): region, credentials and the AWS_ENDPOINT_URL_* overrides, each read from
 * `env`, so `main(argv, env)` acts where `env` says and nowhere else.
 */
import { CloudWatchClient } from "@aws-sdk/client-cloudwatch";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { KinesisClient } from "@aws-sdk/client-kinesis";
import type { S3Client } from "@aws-sdk/client-s3";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { STSClient } from "@aws-sdk/client-sts";
import { type ClientOptions, commonClientConfig } from "@mcp-pipeline/aws";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { UsageError } from "@mcp-pipeline/cli";

/** The services a run may reach, by the suffix of their AWS_ENDPOINT_URL_<SERVICE> variable. */
export const SERVICES = ["S3", "SQS", "KINESIS", "STS", "CLOUDWATCH", "DYNAMODB"] as const;
export type Service = (typeof SERVICES)[number];

/** Where a service's requests go when the environment overrides it: its own variable, or AWS_ENDPOINT_URL. */
export function endpointOf(env: NodeJS.ProcessEnv, service: Service): string | undefined {
  return env[`AWS_ENDPOINT_URL_${service}`] || env.AWS_ENDPOINT_URL || undefined;
}

/**
 * Why a service cannot be reached here, when the others are overridden and it is not: its requests would
 * go to AWS while the rest go to an emulator (a half-set environment answers about the wrong place).
 */
export function unreachable(env: NodeJS.ProcessEnv, service: Service): string | undefined {
  if (endpointOf(env, service) !== undefined) return undefined;
  const overridden = SERVICES.filter((s) => endpointOf(env, s) !== undefined);
  if (overridden.length === 0) return undefined;
  const at = new Map<string, Service[]>();
  for (const s of overridden) {
    const endpoint = endpointOf(env, s) as string;
    at.set(endpoint, [...(at.get(endpoint) ?? []), s]);
  }
  const where = [...at].map(
    ([endpoint, services]) => `${services.join(", ")} ${services.length === 1 ? "is" : "are"} at ${endpoint}`,
  );
  return `no endpoint for ${service} (AWS_ENDPOINT_URL_${service}) while ${where.join("; ")}`;
}

/** Errors of the network, not of the service: nothing answered at the endpoint. */
const NETWORK = /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE)$/;

/** Whether `error` is the network's (nothing answered), with its code. */
export function networkCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && NETWORK.test(code) ? code : undefined;
}

/**
 * An error of a request to `service`, for a person: where it went when nothing answered there (which of
 * the endpoints the environment set, or AWS), else the service's own `name: message`.
 */
export function unanswered(env: NodeJS.ProcessEnv, service: Service, error: unknown): string {
  const code = networkCode(error);
  if (code === undefined) return `${(error as Error).name}: ${(error as Error).message}`;
  const endpoint = endpointOf(env, service);
  return `${service} at ${endpoint ?? "its AWS endpoint"} did not answer (${code})${endpoint ? `: is the stack running, and AWS_ENDPOINT_URL_${service} right?` : ""}`;
}

/**
 * A network error of any request, for a person: which of the environment's endpoints did not answer
 * (matched by the address the error names), or the address.
 */
export function nobodyAnswered(env: NodeJS.ProcessEnv, error: unknown): string | undefined {
  const code = networkCode(error);
  if (code === undefined) return undefined;
  const { address, port, hostname } = error as { address?: string; port?: number; hostname?: string };
  const at = address !== undefined ? `${address}${port !== undefined ? `:${port}` : ""}` : hostname;
  const services = SERVICES.filter((s) => at !== undefined && endpointOf(env, s)?.includes(at));
  const where =
    services.length > 0
      ? `${services.join(", ")} at ${endpointOf(env, services[0] as Service)}`
      : `the endpoint ${at ?? "(unknown)"}`;
  return `${where} did not answer (${code}): nothing was changed by this request; is the stack running, and are AWS_ENDPOINT_URL_* right?`;
}

export interface AwsClients {
  /** AWS_REGION (or AWS_DEFAULT_REGION); read on first use, a UsageError when neither is set. */
  readonly region: string;
  readonly env: NodeJS.ProcessEnv;
  readonly s3: S3Client;
  readonly sqs: SQSClient;
  readonly kinesis: KinesisClient;
  readonly sts: STSClient;
  readonly cloudwatch: CloudWatchClient;
  readonly dynamodb: DynamoDBClient;
  destroy(): void;
}

/** The region to act in: AWS_REGION, or AWS_DEFAULT_REGION (the AWS CLI's). Required: nothing guesses it. */
export function regionOf(env: NodeJS.ProcessEnv): string {
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION;
  if (!region)
    throw new UsageError(
      "no region: set AWS_REGION to the region of the environment to act on (npm start -- --serve prints it for the local stack)",
    );
  return region;
}

/**
 * Clients for every service, each built on first use: a command checks its command line before it
 * reaches AWS, so a bad option is named before a missing region or a request.
 */
export function awsClients(env: NodeJS.ProcessEnv): AwsClients {
  const credentials =
    env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
      ? {
          accessKeyId: env.AWS_ACCESS_KEY_ID,
          secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
          ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
        }
      : undefined;
  const options = (service: Service): ClientOptions => {
    const endpoint = endpointOf(env, service);
    return {
      region: regionOf(env),
      ...(endpoint ? { endpoint } : {}),
      ...(credentials ? { credentials } : {}),
      // An operator's command waits longer for an answer than a function does, and says what failed.
      requestTimeoutMs: 30_000,
      connectionTimeoutMs: 3_000,
    };
  };
  const built: { destroy(): void }[] = [];
  const lazy = <T extends { destroy(): void }>(make: () => T): (() => T) => {
    let client: T | undefined;
    return () => {
      if (client === undefined) {
        client = make();
        built.push(client);
      }
      return client;
    };
  };
  const s3 = lazy(() => s3Client(options("S3"), env));
  const sqs = lazy(() => sqsClient(options("SQS")));
  const kinesis = lazy(() => kinesisClient(options("KINESIS")));
  const sts = lazy(() => new STSClient(commonClientConfig({ ...options("STS"), maxAttempts: 2 })));
  const cloudwatch = lazy(
    () => new CloudWatchClient(commonClientConfig({ ...options("CLOUDWATCH"), maxAttempts: 2 })),
  );
  const dynamodb = lazy(() => new DynamoDBClient(commonClientConfig(options("DYNAMODB"))));
  return {
    get region() {
      return regionOf(env);
    },
    env,
    get s3() {
      return s3();
    },
    get sqs() {
      return sqs();
    },
    get kinesis() {
      return kinesis();
    },
    get sts() {
      return sts();
    },
    get cloudwatch() {
      return cloudwatch();
    },
    get dynamodb() {
      return dynamodb();
    },
    destroy: () => {
      for (const client of built) client.destroy();
    },
  };
}
