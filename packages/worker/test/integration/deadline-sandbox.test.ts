// The tool-worker's bundle in a local Lambda sandbox that enforces its timeout (local/runtime/src/esm: an
// overrun is "Task timed out" and the sandbox is destroyed), with its DynamoDB behind a door that applies
// one call's write and never answers it. The invocation still answers in time: that job is reported
// (§2.3), the others are done. Its redelivery finds the write that was applied and publishes that outcome
// instead of running the tool again (docs/idempotency.md "Requests cut off by the deadline").
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { DoorAction, type RequestDoor, startRequestDoor } from "@mcp-pipeline/emulators";
import { bundleAll } from "@mcp-pipeline/emulators/testing";
import { type InvokeResult, LocalFunction, unzipTo } from "@mcp-pipeline/local-runtime";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { body, job, WorkerStack } from "../stack.js";

let stack: WorkerStack;
let door: RequestDoor;
let dist: string;
let fn: LocalFunction;
/** The call whose completed write to the tool-calls table the door holds, while set. */
let holding: string | undefined;
const logs: string[] = [];

beforeAll(async () => {
  [stack, dist] = await Promise.all([WorkerStack.start(), bundleAll(["tool-worker"])]);
  await stack.reset();
  const [dynamodb = ""] = stack.endpoints;
  door = await startRequestDoor(dynamodb, (target, text) => {
    if (holding === undefined || target !== "DynamoDB_20120810.PutItem") return DoorAction.Pass;
    const put = JSON.parse(text) as {
      TableName?: string;
      Item?: { callId?: { S?: string }; status?: { S?: string } };
    };
    // The call's outcome; the worker's write that takes the call (status started) passes.
    const held =
      put.TableName === stack.names.toolCalls &&
      put.Item?.callId?.S === holding &&
      put.Item?.status?.S === "completed";
    return held ? DoorAction.HoldAnswer : DoorAction.Pass;
  });
  const codeFile = await unzipTo(await readFile(join(dist, "tool-worker.zip")), join(dist, "tool-worker"));
  fn = new LocalFunction(
    {
      name: "tool-worker",
      codeFile,
      // Seconds to spare on a loaded machine: the requests still open are aborted at half the margin
      // (2 s before the end), and nothing here is slow but the held write.
      timeoutMs: 8_000,
      memoryMb: 512,
      environment: {
        ...stack.functionEnvironment(stack.standard.dlqUrl),
        AWS_ENDPOINT_URL_DYNAMODB: door.endpoint,
        DEADLINE_MARGIN_MS: "4000",
      },
    },
    {},
    (_name, line) => logs.push(line),
  );
}, 300_000);

afterAll(async () => {
  await fn?.stop();
  await door?.stop();
  await stack?.stop();
  if (dist) await rm(dist, { recursive: true, force: true });
});

const failuresOf = (result: InvokeResult) => {
  if (result.kind !== "ok")
    throw new Error(`the invocation failed: ${result.errorType}: ${result.errorMessage}`);
  return (JSON.parse(result.payload) as { batchItemFailures: { itemIdentifier: string }[] })
    .batchItemFailures;
};

it("a write that never answers: the invocation answers before its timeout, that job reported, the rest done; its retry publishes what the write stored", async () => {
  const [a, held, c] = ["a", "held", "c"].map((tag) => job("http.request", { path: `/ok/${tag}` }));
  if (!a || !held || !c) throw new Error("three jobs");
  await stack.send(stack.standard, [body(a), body(held), body(c)]);
  const records = await stack.receive(stack.standard);
  expect(records).toHaveLength(3);
  const heldRecord = records.find((r) => r.body.includes(`"${held.callId}"`));

  holding = held.callId;
  const first = await fn.invoke({ Records: records });

  expect(fn.stats.timeouts).toBe(0);
  expect(failuresOf(first)).toEqual([{ itemIdentifier: heldRecord?.messageId }]);
  expect(door.stats.held).toBe(1);
  // The SDK gave the held request up: the door saw its connection close.
  await vi.waitFor(() => expect(door.stats.abandoned).toBe(1), { timeout: 30_000, interval: 50 });
  expect((await stack.call(a.callId))?.status).toBe("completed");
  expect((await stack.call(c.callId))?.status).toBe("completed");
  // The held write reached the table before its answer was withheld: applied, though its job is reported.
  expect((await stack.call(held.callId))?.status).toBe("completed");
  const report = logs.find(
    (l) => l.includes("job reported for retry") && l.includes(heldRecord?.messageId ?? "?"),
  );
  expect(report).toContain("invocation-deadline");

  // Lambda delivers the reported message again (§2.3); the door lets everything through now.
  holding = undefined;
  const retry = await fn.invoke({ Records: heldRecord ? [heldRecord] : [] });

  expect(fn.stats.timeouts).toBe(0);
  expect(failuresOf(retry)).toEqual([]);
  // The tool ran once; the retry published the stored outcome.
  expect(stack.downstream.requests.filter((p) => p === "/ok/held")).toHaveLength(1);
  const completed = (await stack.events()).filter(
    (e) => e.callId === held.callId && e.type === "tool_call.completed",
  );
  expect(completed.map((e) => e.eventId)).toEqual([(await stack.call(held.callId))?.statusEvent.eventId]);
}, 120_000);
