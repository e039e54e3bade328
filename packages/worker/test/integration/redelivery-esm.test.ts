// The retry backoff end to end: Lambda's SQS event source mapping (local/runtime/src/esm) on fauxqs, the
// worker's core, and its ChangeMessageVisibilityBatch on the source queue. The queues hide a message
// for 15 minutes, far past the wait bound: a job that comes back within it came back after its backoff
// (§2.6), not after the visibility timeout (§2.3). What is asserted is the receive count, not a time.
import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { TransientError } from "@mcp-pipeline/contracts";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { WorkerDeps } from "../../src/index.js";
import type { Redelivery } from "../../src/redelivery.js";
import { changeMessageVisibility } from "../../src/sqs-visibility.js";
import { body, job, type Queue, WorkerStack } from "../stack.js";

let stack: WorkerStack;
beforeAll(async () => {
  stack = await WorkerStack.start();
}, 300_000);
afterAll(async () => {
  await stack?.stop();
});

/** 15 minutes: without the backoff, a reported job would not show again while a test waits. */
const VISIBILITY_SECONDS = 900;
beforeEach(async () => {
  await stack.reset(3, VISIBILITY_SECONDS);
});

/** How long a test waits for the mapping to reach a state: a bound for a broken run, not a speed assertion. */
const ESM_WAIT = { timeout: 120_000, interval: 100 };

/** A backoff of 1 s for a first failure (the draw's top: 0.999 x 1,000 ms, rounded). */
const redelivery = (): Redelivery => ({
  backoff: { baseMs: 1_000, capMs: 2_000, maxReceiveCount: 3 },
  random: () => 0.999,
  changeVisibility: (url, changes, signal) => changeMessageVisibility(stack.sqs, url, changes, signal),
});

/** The tool fails transiently: a downstream blip. */
const blip: WorkerDeps["registry"] = {
  invoke: async () => {
    throw new TransientError("downstream-5xx", "503 from the downstream");
  },
};

async function notVisible(queue: Queue): Promise<number> {
  const { Attributes = {} } = await stack.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queue.url,
      AttributeNames: ["ApproximateNumberOfMessagesNotVisible"],
    }),
  );
  return Number(Attributes.ApproximateNumberOfMessagesNotVisible);
}

describe("a job that fails transiently comes back after its backoff, not the visibility timeout (§2.3, §2.6)", () => {
  it("standard queue: the first invocation reports it and backs it off; it is received a second time and completes", async () => {
    const j = job("http.request", { path: "/ok/backoff" });
    await stack.send(stack.standard, [body(j)]);
    const esm = await stack.esm(stack.standard, (n) =>
      stack.deps("standard", { redelivery: redelivery(), ...(n === 0 ? { registry: blip } : {}) }),
    );
    await vi
      .waitFor(async () => expect((await stack.call(j.callId))?.status).toBe("completed"), ESM_WAIT)
      .finally(() => esm.stop());

    const [first, second] = esm.invocations;
    expect(first?.result.summary).toMatchObject({ retried: 1, backedOff: 1 });
    expect(first?.result.response.batchItemFailures).toEqual([
      { itemIdentifier: first?.records[0]?.messageId },
    ]);
    // The same message, received again: SQS gave it back at the end of the backoff.
    expect(second?.records.map((r) => [r.messageId, r.attributes.ApproximateReceiveCount])).toEqual([
      [first?.records[0]?.messageId, "2"],
    ]);
    expect(await notVisible(stack.standard)).toBe(0);
  });

  it("without the backoff the same failure leaves the message hidden for the visibility timeout", async () => {
    const j = job("http.request", { path: "/ok/no-backoff" });
    await stack.send(stack.standard, [body(j)]);
    const esm = await stack.esm(stack.standard, () => stack.deps("standard", { registry: blip }));
    await vi.waitFor(() => expect(esm.invocations).toHaveLength(1), ESM_WAIT).finally(() => esm.stop());

    expect(esm.invocations[0]?.result.summary).toMatchObject({ retried: 1, backedOff: 0 });
    // Reported, not deleted, and still in flight: it shows again only when the 15 minutes end.
    expect(await notVisible(stack.standard)).toBe(1);
  });

  it("FIFO queue: a failed job of a group comes back after the group's backoff, and the group keeps its order (§3)", async () => {
    const jobs = ["first", "second", "third"].map((tag) =>
      job("http.request", { path: `/ok/fifo-${tag}` }, { sessionId: "session-a" }),
    );
    await stack.send(
      stack.fifo,
      jobs.map((j) => ({ ...body(j), group: "session-a" })),
    );
    const esm = await stack.esm(stack.fifo, (n) =>
      stack.deps("fifo", { redelivery: redelivery(), ...(n === 0 ? { registry: blip } : {}) }),
    );
    await vi
      .waitFor(async () => {
        for (const j of jobs) expect((await stack.call(j.callId))?.status).toBe("completed");
      }, ESM_WAIT)
      .finally(() => esm.stop());

    const first = esm.invocations[0];
    expect(first?.result.summary.backedOff).toBe(first?.records.length);
    // The downstream saw the group's jobs in the order they were sent, the failed one again first.
    const requests = stack.downstream.requests.filter((p) => p.startsWith("/ok/fifo-"));
    expect(requests).toEqual(["/ok/fifo-first", "/ok/fifo-second", "/ok/fifo-third"]);
    const firstMessage = first?.records[0]?.messageId;
    const again = esm.invocations
      .slice(1)
      .flatMap((i) => i.records)
      .find((r) => r.messageId === firstMessage);
    expect(again?.attributes.ApproximateReceiveCount).toBe("2");
  });
});
