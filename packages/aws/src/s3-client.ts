import { S3Client } from "@aws-sdk/client-s3";
import { type ClientOptions, commonClientConfig } from "./client-options.js";

/**
 * Path-style addressing when an endpoint override is in force: emulators serve buckets by path, and
 * virtual-host style would need wildcard DNS for 127.0.0.1.
 *
 * Flexible checksums (x-amz-checksum-*) only where an operation requires one: the SDK's default would add a
 * CRC32 to every PutObject and validate one on every GetObject, which the bodies we write do not need (a
 * string body is signed: x-amz-content-sha256 is its SHA-256, which S3 checks), and functions' bundles leave
 * the checksum code out on that ground (without-flexible-checksums.ts, docs/benchmarks/cold-start.md).
 */
export function s3Client(options: ClientOptions = {}, env: NodeJS.ProcessEnv = process.env): S3Client {
  const overridden = options.endpoint ?? env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
  return new S3Client({
    ...commonClientConfig(options),
    forcePathStyle: overridden !== undefined,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}
