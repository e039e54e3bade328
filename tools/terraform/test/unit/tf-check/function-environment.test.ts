// tf:check holds each applied function's environment to function-environment.json's declaration
// (assertions.ts): here the comparison, given an environment broken each way Terraform could break it.
import { describe, expect, it } from "vitest";
import { functionEnvironmentFindings } from "../../../src/tf-check/assertions.ts";

const declared = {
  TOOL_CALLS_TABLE: "mcp-dev-tool-calls",
  MAX_RECEIVE_COUNT: "5",
  DEAD_LETTER_QUEUE_URL: "https://sqs.eu-west-1.amazonaws.com/123456789012/mcp-dev-tool-jobs-dlq",
};

describe("functionEnvironmentFindings", () => {
  it("the declared environment, its queue URL from another endpoint: no finding", () => {
    const applied = {
      ...declared,
      DEAD_LETTER_QUEUE_URL: "http://127.0.0.1:4566/123456789012/mcp-dev-tool-jobs-dlq",
    };
    expect(functionEnvironmentFindings("mcp-dev-tool-worker", applied, declared)).toEqual([]);
  });

  it("a variable missing, one nobody declares, a value changed, another queue: each named", () => {
    const applied = {
      MAX_RECEIVE_COUNT: "3",
      DEAD_LETTER_QUEUE_URL: "http://127.0.0.1:4566/123456789012/mcp-dev-session-jobs-dlq.fifo",
      STRAY: "x",
    };
    expect(functionEnvironmentFindings("mcp-dev-tool-worker", applied, declared)).toEqual([
      'mcp-dev-tool-worker environment: DEAD_LETTER_QUEUE_URL is "http://127.0.0.1:4566/123456789012/mcp-dev-session-jobs-dlq.fifo", the declaration says "https://sqs.eu-west-1.amazonaws.com/123456789012/mcp-dev-tool-jobs-dlq"',
      'mcp-dev-tool-worker environment: MAX_RECEIVE_COUNT is "3", the declaration says "5"',
      "mcp-dev-tool-worker environment: STRAY is set, and nothing declares it",
      "mcp-dev-tool-worker environment: TOOL_CALLS_TABLE is declared (mcp-dev-tool-calls), and not set",
    ]);
  });
});
