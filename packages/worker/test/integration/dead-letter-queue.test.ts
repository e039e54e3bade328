import { DeadLetterAttribute } from "@mcp-pipeline/aws";
import { lambdaContext } from "@mcp-pipeline/emulators/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { type DeadLetterModule, lazyDeadLetterQueue, processToolCallJobs } from "../../src/index.js";
import { body, job, WorkerStack } from "../stack.js";

let stack: WorkerStack;
beforeAll(async () => {
  stack = await WorkerStack.start();
}, 300_000);
afterAll(() => stack?.stop());
beforeEach(async () => {
  await stack.reset();
  // The client the rare path builds is configured as in Lambda: from the environment.
  for (const [name, value] of Object.entries(stack.functionEnvironment(stack.standard.dlqUrl))) {
    vi.stubEnv(name, value);
  }
});
afterEach(() => vi.unstubAllEnvs());

/** The dynamic import, failing as a missing chunk would the first `failures` times. */
function loader(failures: number): { load: () => Promise<DeadLetterModule>; calls: () => number } {
  let calls = 0;
  return {
    calls: () => calls,
    load: async () => {
      calls += 1;
      if (calls <= failures) throw new Error("Cannot find module '/var/task/chunk-ABCDEFGH.mjs'");
      return import("@mcp-pipeline/aws/sqs-client");
    },
  };
}

describe("the workers' DLQ send, loaded on the first poison message", () => {
  it("a failed load fails that message for SQS to redeliver, the rest of the batch completes, and the next load sends it", async () => {
    const good = job("text.stats", { text: "kept" });
    await stack.send(stack.standard, [body(good), { body: "{ not a job" }]);
    const records = await stack.receive(stack.standard);
    const poison = records.find((r) => r.body === "{ not a job");
    const { load, calls } = loader(1);
    const send = lazyDeadLetterQueue({}, load);
    const deps = stack.deps("standard", {
      deadLetter: (record, reason) => send(stack.standard.dlqUrl, record, reason),
    });

    const first = await processToolCallJobs(records, lambdaContext({ timeoutMs: 30_000 }), deps);
    expect(first.response.batchItemFailures).toEqual([{ itemIdentifier: poison?.messageId }]);
    expect(first.summary).toMatchObject({ succeeded: 1, deadLettered: 0, retried: 1 });
    expect((await stack.call(good.callId))?.status).toBe("completed");
    expect(await stack.drain(stack.standard.dlqUrl)).toEqual([]);

    // SQS redelivers the poison message; this time the module loads and the message reaches the DLQ.
    const again = await processToolCallJobs(
      poison ? [poison] : [],
      lambdaContext({ timeoutMs: 30_000 }),
      deps,
    );
    expect(again.response.batchItemFailures).toEqual([]);
    expect(again.summary).toMatchObject({ deadLettered: 1 });
    const dead = await stack.drain(stack.standard.dlqUrl);
    expect(dead.map((m) => m.body)).toEqual(["{ not a job"]);
    expect(dead[0]?.attributes[DeadLetterAttribute.SourceMessageId]).toBe(poison?.messageId);
    expect(calls()).toBe(2);
  });

  it("loads the module once and shares the client across sends", async () => {
    await stack.send(stack.standard, [{ body: "one" }, { body: "two" }, { body: "three" }]);
    const records = await stack.receive(stack.standard);
    const { load, calls } = loader(0);
    const send = lazyDeadLetterQueue({}, load);
    const { response, summary } = await processToolCallJobs(
      records,
      lambdaContext({ timeoutMs: 30_000 }),
      stack.deps("standard", { deadLetter: (record, reason) => send(stack.standard.dlqUrl, record, reason) }),
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(summary.deadLettered).toBe(3);
    expect((await stack.drain(stack.standard.dlqUrl)).map((m) => m.body).sort()).toEqual([
      "one",
      "three",
      "two",
    ]);
    expect(calls()).toBe(1);
  });
});
