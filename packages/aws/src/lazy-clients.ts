import type { S3Client } from "@aws-sdk/client-s3";
import type { ClientOptions } from "./client-options.js";

/** A client built on first use: the first call loads the SDK client module, later calls share it. */
export type LazyClient<C> = () => Promise<C>;

/** Built on first call, then shared; a failed load is not kept, so the next call tries again. */
export function once<C>(build: () => Promise<C>): LazyClient<C> {
  let client: Promise<C> | undefined;
  return () => {
    // A failed load (which only a broken bundle can cause) is not cached: the next call tries again.
    client ??= build().catch((error: unknown) => {
      client = undefined;
      throw error;
    });
    return client;
  };
}

/**
 * For a function that needs S3 only on a rare path (the processor's quarantine): the S3 client is a
 * large module whose evaluation every cold start would otherwise pay (Lambda's init phase,
 * docs/benchmarks/cold-start.md). The dynamic import keeps it off the import path; bundled without
 * code splitting, esbuild keeps the module in the same file and evaluates it on first call.
 */
export function lazyS3Client(
  options: ClientOptions = {},
  env: NodeJS.ProcessEnv = process.env,
): LazyClient<S3Client> {
  return once(async () => (await import("./s3-client.js")).s3Client(options, env));
}
