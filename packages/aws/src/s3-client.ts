import { S3Client } from "@aws-sdk/client-s3";
import { type ClientOptions, commonClientConfig } from "./client-options.js";

/**
 * Path-style addressing when an endpoint override is in force: emulators serve buckets by path, and
 * virtual-host style would need wildcard DNS for 127.0.0.1.
 */
export function s3Client(options: ClientOptions = {}, env: NodeJS.ProcessEnv = process.env): S3Client {
  const overridden = options.endpoint ?? env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
  return new S3Client({ ...commonClientConfig(options), forcePathStyle: overridden !== undefined });
}
