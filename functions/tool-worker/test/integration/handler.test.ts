import { describe, expect, it } from "vitest";
// The workers' emulator stack (dynalite, kinesalite, fauxqs, a loopback downstream): one for both workers.
import { body, job, workerHandlerSuite } from "../../../../packages/worker/test/stack.js";

const suite = workerHandlerSuite(() => import("../../src/index.js"));

describe("tool-worker handler: the consumer shell over the worker, configured only through the environment", () => {
  it("reaches every service through AWS_ENDPOINT_URL_*, runs the catalogue's tools and emits EMF metrics", async () => {
    const handler = await suite.freshHandler(suite.stack.functionEnvironment(suite.stack.standard.dlqUrl));
    const { result, lines } = await suite.invokeWith(handler, suite.stack.standard, [
      body(job("text.stats", { text: "one two" })),
      { body: "not a job" },
    ]);

    expect(result).toEqual({ batchItemFailures: [] });
    const emf = lines.find((l) => l._aws !== undefined);
    expect(emf).toMatchObject({ Jobs: 2, Succeeded: 1, DeadLettered: 1, Retried: 0, service: "tool-worker" });
    expect(lines.some((l) => l.message === "poison message sent to the DLQ")).toBe(true);
    expect((await suite.stack.drain(suite.stack.standard.dlqUrl)).map((d) => d.body)).toEqual(["not a job"]);
  });

  it("returns the failed messageIds as the partial batch response (§2.3)", async () => {
    const handler = await suite.freshHandler(suite.stack.functionEnvironment(suite.stack.standard.dlqUrl));
    const { records, result, lines } = await suite.invokeWith(handler, suite.stack.standard, [
      body(job("http.request", { path: "/status/500/x" })),
    ]);
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: records[0]?.messageId }] });
    expect(lines.find((l) => l.message === "job reported for retry")).toMatchObject({
      messageId: records[0]?.messageId,
      code: "downstream-5xx",
    });
    // Its message's visibility was set to the retry backoff on the source queue, named by the event's
    // queue ARN and reached through AWS_ENDPOINT_URL_SQS (§2.6): no warning that it failed.
    expect(lines.find((l) => l._aws !== undefined)).toMatchObject({ Retried: 1, BackedOff: 1 });
    expect(lines.filter((l) => String(l.message).includes("visibility"))).toEqual([]);
  });

  it("with MAX_RECEIVE_COUNT, records a call whose last allowed attempt failed as dead-lettered, with its DLQ", async () => {
    const handler = await suite.freshHandler({
      ...suite.stack.functionEnvironment(suite.stack.standard.dlqUrl),
      MAX_RECEIVE_COUNT: "1",
    });
    const doomed = job("http.request", { path: "/status/503/last" });
    const { records, result, lines } = await suite.invokeWith(handler, suite.stack.standard, [body(doomed)]);
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: records[0]?.messageId }] });
    expect(lines.find((l) => l._aws !== undefined)).toMatchObject({ Retried: 1, LeavingForDlq: 1 });
    expect(await suite.stack.call(doomed.callId)).toMatchObject({
      status: "dead-lettered",
      deadLetter: { queue: suite.stack.standard.dlqUrl, attempt: 1 },
    });
  });

  suite.itRefusesMalformedEvents();

  it("fails loudly, naming every bad setting (the worker's and the tools'), on every invocation", async () => {
    const handler = await suite.freshHandler({
      TOOL_CALLS_TABLE: "tool-calls",
      DEAD_LETTER_QUEUE_URL: "not-a-url",
      RESULT_INLINE_MAX_BYTES: "500000",
      MAX_RECEIVE_COUNT: "0",
      EVENTS_STREAM_NAME: "bad name!",
      HTTP_TOOL_BASE_URL: "ftp://files.example",
      DEDUPE_TABLE: undefined,
      RESULTS_BUCKET: undefined,
    });
    await suite.expectConfigErrorNaming(handler, [
      "DEDUPE_TABLE",
      "RESULTS_BUCKET",
      "DEAD_LETTER_QUEUE_URL",
      "RESULT_INLINE_MAX_BYTES",
      "EVENTS_STREAM_NAME",
      "MAX_RECEIVE_COUNT",
      "HTTP_TOOL_BASE_URL",
    ]);
  });
});
