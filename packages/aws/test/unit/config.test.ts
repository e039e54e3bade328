import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, loadConfig } from "../../src/index.js";
import { s3Client } from "../../src/s3-client.js";

const schema = z.object({
  TABLE_NAME: z.string().min(3),
  CONCURRENCY: z.coerce.number().int().min(1).max(100),
});

describe("loadConfig: a function's environment is checked once, all problems reported together", () => {
  it("returns typed values", () => {
    expect(loadConfig(schema, { TABLE_NAME: "tool-calls", CONCURRENCY: "8" })).toEqual({
      TABLE_NAME: "tool-calls",
      CONCURRENCY: 8,
    });
  });

  it("names every missing or invalid variable in one ConfigError", () => {
    try {
      loadConfig(schema, { CONCURRENCY: "0" });
      expect.fail("should throw");
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems;
      expect(problems).toHaveLength(2);
      expect(problems.join("\n")).toMatch(/TABLE_NAME/);
      expect(problems.join("\n")).toMatch(/CONCURRENCY/);
    }
  });
});

describe("s3Client", () => {
  it("uses path-style addressing only when an endpoint override is in force", async () => {
    expect(await s3Client({ region: "us-east-1" }, {}).config.forcePathStyle).toBe(false);
    expect(
      await s3Client({ region: "us-east-1" }, { AWS_ENDPOINT_URL_S3: "http://127.0.0.1:1" }).config
        .forcePathStyle,
    ).toBe(true);
    expect(
      await s3Client({ region: "us-east-1", endpoint: "http://127.0.0.1:1" }, {}).config.forcePathStyle,
    ).toBe(true);
  });
});
