import { describe, expect, it } from "vitest";
import {
  InvalidArnError,
  parseArn,
  queueNameOfArn,
  queueUrlOfArn,
  streamNameOfArn,
} from "../../../src/arn/index.js";

describe("parseArn", () => {
  it("splits an ARN into its five fields, the resource whole even when it holds colons", () => {
    expect(parseArn("arn:aws:lambda:eu-west-1:123456789012:function:processor:live")).toEqual({
      partition: "aws",
      service: "lambda",
      region: "eu-west-1",
      accountId: "123456789012",
      resource: "function:processor:live",
    });
  });

  it("reads other partitions, and the empty region and account of global services", () => {
    expect(parseArn("arn:aws-us-gov:iam::123456789012:role/deploy")).toMatchObject({
      partition: "aws-us-gov",
      region: "",
      resource: "role/deploy",
    });
    expect(parseArn("arn:aws-cn:s3:::quarantine/kinesis/a.json")).toMatchObject({
      partition: "aws-cn",
      accountId: "",
      resource: "quarantine/kinesis/a.json",
    });
  });

  it.each([
    ["", /is not an ARN \(arn:partition/],
    ["tool-jobs", /is not an ARN \(arn:partition/],
    ["arn:aws:sqs:eu-west-1:123456789012", /is not an ARN \(arn:partition/],
    ["urn:aws:sqs:eu-west-1:123456789012:jobs", /is not an ARN \(arn:partition/],
    ["arn::sqs:eu-west-1:123456789012:jobs", /no AWS partition/],
    ["arn:aws::eu-west-1:123456789012:jobs", /no service/],
    ["arn:aws:sqs:eu-west-1:123456789012:", /no resource/],
  ])("refuses %j with an InvalidArnError that keeps the input and says why", (arn, message) => {
    let caught: unknown;
    try {
      parseArn(arn);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidArnError);
    expect((caught as InvalidArnError).name).toBe("InvalidArnError");
    expect((caught as InvalidArnError).arn).toBe(arn);
    expect((caught as InvalidArnError).message).toMatch(message);
  });
});

describe("InvalidArnError repeats a bounded part of what it was given", () => {
  it("names the first 256 characters of a 1 MB non-ARN (a record's eventSourceARN can be anything)", () => {
    const long = "x".repeat(1_000_000);
    const caught = (() => {
      try {
        parseArn(long);
      } catch (error) {
        return error as InvalidArnError;
      }
    })();
    expect(caught?.arn).toBe(long);
    expect(caught?.message).toBe(
      `"${"x".repeat(256)}…" is not an ARN (arn:partition:service:region:account-id:resource)`,
    );
  });
});

describe("streamNameOfArn", () => {
  it("reads the name of a stream, and of the stream behind a consumer's ARN", () => {
    expect(streamNameOfArn("arn:aws:kinesis:eu-west-1:123456789012:stream/tool-call-events")).toBe(
      "tool-call-events",
    );
    expect(
      streamNameOfArn(
        "arn:aws:kinesis:eu-west-1:123456789012:stream/tool-call-events/consumer/efo:1700000000",
      ),
    ).toBe("tool-call-events");
  });

  it.each([
    "arn:aws:sqs:eu-west-1:123456789012:tool-jobs",
    "arn:aws:kinesis:eu-west-1:123456789012:tool-call-events",
    "arn:aws:kinesis:eu-west-1:123456789012:stream/",
    "stream/tool-call-events",
  ])("refuses %j: not a Kinesis stream ARN", (arn) => {
    expect(() => streamNameOfArn(arn)).toThrow(InvalidArnError);
    expect(() => streamNameOfArn(arn)).toThrow(/is not (a Kinesis stream ARN|an ARN)/);
  });
});

describe("queueNameOfArn", () => {
  it("reads the name of a standard and of a FIFO queue", () => {
    expect(queueNameOfArn("arn:aws:sqs:eu-west-1:123456789012:dev-tool-jobs-dlq")).toBe("dev-tool-jobs-dlq");
    expect(queueNameOfArn("arn:aws:sqs:eu-west-1:123456789012:dev-session-jobs.fifo")).toBe(
      "dev-session-jobs.fifo",
    );
  });

  it.each([
    "arn:aws:kinesis:eu-west-1:123456789012:stream/events",
    "arn:aws:sqs:eu-west-1:123456789012:jobs:extra",
    "https://sqs.eu-west-1.amazonaws.com/123456789012/jobs",
  ])("refuses %j: not an SQS queue ARN", (arn) => {
    expect(() => queueNameOfArn(arn)).toThrow(InvalidArnError);
    expect(() => queueNameOfArn(arn)).toThrow(/is not (an SQS queue ARN|an ARN)/);
  });
});

describe("queueUrlOfArn", () => {
  it("gives the queue URL of a standard, a FIFO and a China-partition queue", () => {
    expect(queueUrlOfArn("arn:aws:sqs:eu-west-1:123456789012:dev-tool-jobs")).toBe(
      "https://sqs.eu-west-1.amazonaws.com/123456789012/dev-tool-jobs",
    );
    expect(queueUrlOfArn("arn:aws:sqs:us-east-1:000000000000:jobs.fifo")).toBe(
      "https://sqs.us-east-1.amazonaws.com/000000000000/jobs.fifo",
    );
    expect(queueUrlOfArn("arn:aws-cn:sqs:cn-north-1:123456789012:jobs")).toBe(
      "https://sqs.cn-north-1.amazonaws.com.cn/123456789012/jobs",
    );
  });

  it.each([
    "arn:aws:kinesis:eu-west-1:123456789012:stream/events",
    "arn:aws:sqs::123456789012:jobs",
    "arn:aws:sqs:eu-west-1:12345:jobs",
    "https://sqs.eu-west-1.amazonaws.com/123456789012/jobs",
  ])("refuses %j with an InvalidArnError", (arn) => {
    expect(() => queueUrlOfArn(arn)).toThrow(InvalidArnError);
  });
});
