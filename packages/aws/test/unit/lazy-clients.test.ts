import { S3Client } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import * as z from "zod/mini";
import { ConfigError, lazyS3Client, loadConfig } from "../../src/index.js";

describe("lazy clients: built on first use, then shared", () => {
  it("lazyS3Client loads the S3 client once and keeps s3Client's path-style rule", async () => {
    const s3 = lazyS3Client({ region: "us-east-1" }, { AWS_ENDPOINT_URL_S3: "http://127.0.0.1:1" });
    const [first, second] = await Promise.all([s3(), s3()]);
    expect(first).toBeInstanceOf(S3Client);
    expect(second).toBe(first);
    expect(await s3()).toBe(first);
    expect(first.config.forcePathStyle).toBe(true);
    expect((await lazyS3Client({ region: "us-east-1" }, {})()).config.forcePathStyle).toBe(false);
  });
});

describe("loadConfig with a zod/mini schema (what a function declares to keep zod's full build out)", () => {
  const schema = z.object({
    TABLE_NAME: z.string().check(z.minLength(3)),
    CONCURRENCY: z._default(z.coerce.number().check(z.int(), z.minimum(1)), 4),
  });

  it("returns typed values with defaults", () => {
    const config: { TABLE_NAME: string; CONCURRENCY: number } = loadConfig(schema, { TABLE_NAME: "calls" });
    expect(config).toEqual({ TABLE_NAME: "calls", CONCURRENCY: 4 });
  });

  it("names every bad variable in one ConfigError", () => {
    expect(() => loadConfig(schema, { TABLE_NAME: "x", CONCURRENCY: "0" })).toThrow(ConfigError);
    try {
      loadConfig(schema, { CONCURRENCY: "0" });
      expect.fail("should throw");
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems.map((p) => p.split(":")[0])).toEqual([
        "TABLE_NAME",
        "CONCURRENCY",
      ]);
    }
  });
});
