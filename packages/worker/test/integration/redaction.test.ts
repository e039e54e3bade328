import { DeadLetterAttribute } from "@mcp-pipeline/aws";
import { lambdaContext } from "@mcp-pipeline/emulators/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { processToolCallJobs } from "../../src/index.js";
import { body, job, WorkerStack } from "../stack.js";

// What the worker stores about bad input and failed calls (the DLQ's reason attributes, the failed call in
// the tool-calls table, its lifecycle event) names what went wrong, never the data: a payload's text or a
// URL's query token does not reach them (issue 25 item 11; redact.ts in @mcp-pipeline/contracts).

// Short: V8 quotes up to about ten characters either side of a bad token, so all of it shows there.
const SECRET = "s3cr3t";

let stack: WorkerStack;
beforeAll(async () => {
  stack = await WorkerStack.start();
}, 300_000);
afterAll(async () => {
  await stack?.stop();
});
beforeEach(async () => {
  await stack.reset();
});

describe("stored errors hold no payload text and no URL query", () => {
  it.each([
    ["JSON cut off after a secret", "bad-json", `{"password":"${SECRET}" `],
    ["a bad token beside a secret", "bad-json", `{"pw": ${SECRET}}`],
    [
      "a secret as the specVersion",
      "unsupported-version",
      JSON.stringify({ specVersion: SECRET, callId: "c" }),
    ],
  ])("%s: the DLQ's reason says %s, without the body's text", async (_label, code, text) => {
    await stack.send(stack.standard, [{ body: text }]);
    const records = await stack.receive(stack.standard);
    await processToolCallJobs(records, lambdaContext(), stack.deps("standard"));
    const [dead] = await stack.drain(stack.standard.dlqUrl);
    expect(dead?.body).toBe(text);
    expect(dead?.attributes[DeadLetterAttribute.ReasonCode]).toBe(code);
    expect(dead?.attributes[DeadLetterAttribute.ReasonMessage]).not.toContain(SECRET);
  });

  it("a failed http.request call is stored and published with its URL's origin and path, not its query", async () => {
    const failing = job("http.request", { path: `/status/404/x?token=${SECRET}` });
    await stack.send(stack.standard, [body(failing)]);
    const records = await stack.receive(stack.standard);
    const { summary } = await processToolCallJobs(records, lambdaContext(), stack.deps("standard"));
    expect(summary.failedPermanently).toBe(1);
    const call = await stack.call(failing.callId);
    expect(call?.error).toMatchObject({
      code: "downstream-4xx",
      message: expect.stringContaining("/status/404/x"),
    });
    expect(call?.error?.message).not.toContain(SECRET);
    const published = (await stack.events()).filter((e) => e.type === "tool_call.failed");
    expect(published).toHaveLength(1);
    expect(JSON.stringify(published)).not.toContain(SECRET);
  });
});
