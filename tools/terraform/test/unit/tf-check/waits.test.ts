// Where an apply or a destroy waits, read from Terraform's own output (lines as Terraform 1.11 prints them).
import { describe, expect, it } from "vitest";
import {
  durationSeconds,
  operationProfile,
  profileLine,
  resourceTimes,
  resourceType,
  slowestTypes,
} from "../../../src/tf-check/waits.ts";

const DESTROY = [
  "module.pipeline.module.alarms.aws_cloudwatch_metric_alarm.records_lost: Destroying... [id=mcp-dev-records-lost]",
  "module.pipeline.module.alarms.aws_cloudwatch_metric_alarm.records_lost: Destruction complete after 0s",
  'module.pipeline.module.queue["tool_jobs"].aws_sqs_queue_redrive_policy.this: Destroying... [id=http://127.0.0.1:1/q]',
  'module.pipeline.module.queue["tool_jobs"].aws_sqs_queue_redrive_policy.this: Destruction complete after 26s',
  'module.pipeline.module.queue["tool_jobs"].aws_sqs_queue.this: Still destroying... [id=http://127.0.0.1:1/q, 10s elapsed]',
  'module.pipeline.module.queue["tool_jobs"].aws_sqs_queue.this: Destruction complete after 2m10s',
  'module.pipeline.module.queue["tool_jobs"].aws_sqs_queue.dlq: Destruction complete after 2m9s',
  "",
  "Destroy complete! Resources: 4 destroyed.",
];

describe("durationSeconds", () => {
  it("reads Terraform's durations", () => {
    expect(durationSeconds("0s")).toBe(0);
    expect(durationSeconds("26s")).toBe(26);
    expect(durationSeconds("2m10s")).toBe(130);
    expect(durationSeconds("1h2m3s")).toBe(3723);
  });

  it("refuses what is not one", () => {
    for (const bad of ["", "10", "2m", "1.5s", "s", "-3s"])
      expect(() => durationSeconds(bad)).toThrow(/not a Terraform duration/);
  });
});

describe("resourceType", () => {
  it("drops the module path and the instance keys, dots inside keys included", () => {
    expect(resourceType('module.pipeline.module.queue["tool.jobs"].aws_sqs_queue.dlq')).toBe("aws_sqs_queue");
    expect(resourceType("aws_s3_bucket.state")).toBe("aws_s3_bucket");
    expect(resourceType("aws_iam_role_policy.this[0]")).toBe("aws_iam_role_policy");
  });
});

describe("resourceTimes and slowestTypes", () => {
  it("takes every completed operation, grouped by type with the longest first", () => {
    const times = resourceTimes(DESTROY.join("\n"));
    expect(times).toHaveLength(4);
    expect(times[2]).toEqual({
      address: 'module.pipeline.module.queue["tool_jobs"].aws_sqs_queue.this',
      type: "aws_sqs_queue",
      operation: "destroy",
      seconds: 130,
    });
    expect(slowestTypes(times)).toEqual([
      { type: "aws_sqs_queue", operation: "destroy", count: 2, seconds: 130 },
      { type: "aws_sqs_queue_redrive_policy", operation: "destroy", count: 1, seconds: 26 },
    ]);
    expect(slowestTypes(times, 0).map((t) => t.type)).toContain("aws_cloudwatch_metric_alarm");
  });

  it("reads creations and modifications too, and nothing from other lines", () => {
    const times = resourceTimes(
      [
        "aws_s3_bucket.state: Creation complete after 9s [id=state]",
        "aws_s3_bucket_policy.state: Modifications complete after 1s [id=state]",
        "Plan: 17 to add, 0 to change, 0 to destroy.",
        "Error: creating S3 Bucket: complete after 3s of nothing",
      ].join("\n"),
    );
    expect(times.map((t) => [t.type, t.operation, t.seconds])).toEqual([
      ["aws_s3_bucket", "create", 9],
      ["aws_s3_bucket_policy", "modify", 1],
    ]);
  });
});

describe("operationProfile and profileLine", () => {
  it("times the start before the first resource operation from when its line arrived", () => {
    const lines = DESTROY.map((text, i) => ({ seconds: i === 0 ? 12.34 : 20 + i, text }));
    const profile = operationProfile([{ seconds: 3, text: "module.x: Refreshing state..." }, ...lines]);
    expect(profile.beforeFirstResource).toBe(12.34);
    expect(profileLine("dev destroy", profile)).toBe(
      "dev destroy: 12.3 s before the first resource; the slowest (the longest of each type): aws_sqs_queue x2 130 s, aws_sqs_queue_redrive_policy x1 26 s",
    );
  });

  it("says so when Terraform operated on no resource", () => {
    const profile = operationProfile([
      { seconds: 1, text: "No changes. Your infrastructure matches the configuration." },
    ]);
    expect(profile).toEqual({ beforeFirstResource: null, slowest: [] });
    expect(profileLine("dev apply", profile)).toBe("dev apply: no resource operation");
  });
});
