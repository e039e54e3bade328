import { describe, expect, it } from "vitest";
// The workers' emulator stack (dynalite, kinesalite, fauxqs, a loopback downstream): one for both workers.
import { body, job, workerHandlerSuite } from "../../../../packages/worker/test/stack.js";

const suite = workerHandlerSuite(() => import("../../src/index.js"));

describe("fifo-worker handler: the consumer shell over the worker, configured only through the environment", () => {
  it("reaches every service through AWS_ENDPOINT_URL_*, runs the catalogue's tools and emits EMF metrics", async () => {
    const handler = await suite.freshHandler(suite.stack.functionEnvironment(suite.stack.fifo.dlqUrl));
    const { result, lines } = await suite.invokeWith(handler, suite.stack.fifo, [
      { ...body(job("text.stats", { text: "one two" })), group: "s1" },
      { body: "not a job", group: "s2" },
    ]);

    expect(result).toEqual({ batchItemFailures: [] });
    const emf = lines.find((l) => l._aws !== undefined);
    expect(emf).toMatchObject({ Jobs: 2, Succeeded: 1, DeadLettered: 1, Retried: 0, service: "fifo-worker" });
    expect(lines.some((l) => l.message === "poison message sent to the DLQ")).toBe(true);
    expect((await suite.stack.drain(suite.stack.fifo.dlqUrl)).map((d) => d.body)).toEqual(["not a job"]);
  });

  suite.itRefusesMalformedEvents();

  it("fails loudly, naming every bad setting (the worker's and the tools'), on every invocation", async () => {
    const handler = await suite.freshHandler({
      ...suite.stack.functionEnvironment(suite.stack.fifo.dlqUrl),
      WORKER_CONCURRENCY: "0",
      HTTP_TOOL_TIMEOUT_MS: "0",
      TOOL_CALLS_TABLE: undefined,
    });
    await suite.expectConfigErrorNaming(handler, [
      "WORKER_CONCURRENCY",
      "HTTP_TOOL_TIMEOUT_MS",
      "TOOL_CALLS_TABLE",
    ]);
  });
});
