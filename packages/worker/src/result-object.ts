import { PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { type RequestOptions, sendOptions } from "@mcp-pipeline/aws";

/**
 * The S3 write of a result over the inline limit, loaded by result-store.ts on the first such result:
 * a module of its own, imported dynamically, so that a worker's cold start does not load the S3 client
 * (docs/benchmarks/cold-start.md).
 */
export async function putResultObject(
  s3: S3Client,
  bucket: string,
  key: string,
  json: string,
  options: RequestOptions = {},
): Promise<void> {
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      Body: json,
      ContentType: "application/json",
      ServerSideEncryption: "AES256",
    }),
    sendOptions(options),
  );
}
