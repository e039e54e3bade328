// .ci/aws-provider-services.txt as the provider build and tf:check read it.
import { describe, expect, it } from "vitest";
import { parseServiceList, ServiceListError } from "../../../src/tf-check/service-list.ts";

describe("parseServiceList", () => {
  it("takes one service a line, without comments, blank lines or repeats, sorted", () => {
    const text = "# how to add one\n\nsqs   # queues\nlogs\n  sqs\n";
    expect(parseServiceList(text)).toEqual(["logs", "sqs"]);
  });

  it.each([
    ["two names on a line", "sqs\nlogs sns\n", 2, "logs sns"],
    ["a resource type instead of its service", "aws_sqs_queue\n", 1, "aws_sqs_queue"],
    ["upper case", "# x\nSQS\n", 2, "SQS"],
  ])("refuses %s, naming the file and line", (_, text, line, name) => {
    let error: unknown;
    try {
      parseServiceList(text, "list.txt");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ServiceListError);
    expect(error).toMatchObject({ file: "list.txt", line, text: name });
    expect((error as Error).message).toContain(`list.txt:${line}: "${name}"`);
  });
});
