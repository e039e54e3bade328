// The invocation's deadline bounds every AWS request a job makes (requestDeadlines in @mcp-pipeline/batch):
// against faked SDK clients, one of whose requests never answers until it is aborted. The job that made
// it fails alone and is reported (§2.3); the rest of the batch is processed, or not started and reported,
// and on a FIFO queue the rest of the failed job's group is reported after it, in order (§3).
import type { KinesisClient, PutRecordsCommand } from "@aws-sdk/client-kinesis";
import type { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import type { SQSClient } from "@aws-sdk/client-sqs";
import {
  BatchGetCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { putAllRecords } from "@mcp-pipeline/aws";
import { sendToDeadLetterQueue } from "@mcp-pipeline/aws/sqs-client";
import { DeadlineStage, InvocationDeadlineError, ItemStatus, NotStartedReason } from "@mcp-pipeline/batch";
import { CURRENT_SPEC_VERSION, encodeLifecycleEventRecord, encodeToolCallJob } from "@mcp-pipeline/contracts";
import { lambdaContext, sdkAbortError, sqsRecord, untilAborted } from "@mcp-pipeline/emulators/testing";
import { ToolCallStore } from "@mcp-pipeline/tool-calls";
import { IdempotencyStore } from "@mcp-pipeline/tool-calls/idempotency";
import { defineTool, ToolRegistry } from "@mcp-pipeline/tools/registry";
import { compileWithAjv } from "@mcp-pipeline/tools/registry/ajv";
import type { SQSRecord } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { placeResult, processToolCallJobs, type QueueMode, type WorkerDeps } from "../../src/index.js";
import { changeMessageVisibility } from "../../src/sqs-visibility.js";
import { silentLogger } from "../stack.js";

/** What a faked request does: answer now, or hang until its abort signal fires. */
type Answer = { readonly answer: unknown } | "hang";

/**
 * An SDK client whose `send` answers through `respond`, and whose hanging requests end only when the
 * signal the caller passed aborts: then they reject as the SDK does (an `AbortError` with the signal's
 * reason as its cause), and one sent with a signal already aborted fails at once. A hanging request sent
 * without a signal is recorded and fails at once, so a
 * missing signal shows as a test failure rather than a test that never ends.
 */
function fakeClient(respond: (command: unknown) => Answer) {
  const aborted: unknown[] = [];
  const unbounded: unknown[] = [];
  const client = {
    send: (command: unknown, options?: { abortSignal?: AbortSignal }) => {
      const signal = options?.abortSignal;
      // As the SDK does, a request sent with a signal already aborted is not sent at all.
      if (signal?.aborted) return Promise.reject(sdkAbortError(signal));
      const answer = respond(command);
      if (answer !== "hang") return Promise.resolve(answer.answer);
      if (!signal) {
        unbounded.push(command);
        return Promise.reject(new Error("a request that could hang was sent without an abort signal"));
      }
      return untilAborted(signal, () => aborted.push(command));
    },
  };
  return { client, aborted, unbounded };
}

/** DynamoDB in memory, for the two stores: items by table and key; conditions are not evaluated (no races here). */
function memoryDynamo(hang: (command: unknown) => boolean) {
  const tables = new Map<string, Map<string, Record<string, unknown>>>();
  const table = (name: string) => {
    const t = tables.get(name) ?? new Map<string, Record<string, unknown>>();
    tables.set(name, t);
    return t;
  };
  const keyOf = (key: Record<string, unknown>) => String(key.id ?? key.callId);
  const fake = fakeClient((command): Answer => {
    if (hang(command)) return "hang";
    if (command instanceof BatchGetCommand) {
      const [[name, request]] = Object.entries(command.input.RequestItems ?? {}) as [
        [string, { Keys: Record<string, unknown>[] }],
      ];
      const items = request.Keys.flatMap((k) => table(name).get(keyOf(k)) ?? []);
      return { answer: { Responses: { [name]: items }, UnprocessedKeys: {} } };
    }
    if (command instanceof GetCommand) {
      const input = command.input as { TableName: string; Key: Record<string, unknown> };
      return { answer: { Item: table(input.TableName).get(keyOf(input.Key)) } };
    }
    if (command instanceof PutCommand) {
      const input = command.input as { TableName: string; Item: Record<string, unknown> };
      table(input.TableName).set(keyOf(input.Item), input.Item);
      return { answer: {} };
    }
    if (command instanceof UpdateCommand) {
      // The dedupe table's `complete`: the row becomes COMPLETED.
      const input = command.input as { TableName: string; Key: Record<string, unknown> };
      const row = table(input.TableName).get(keyOf(input.Key));
      if (row) row.status = "COMPLETED";
      return { answer: {} };
    }
    if (command instanceof DeleteCommand) {
      const input = command.input as { TableName: string; Key: Record<string, unknown> };
      table(input.TableName).delete(keyOf(input.Key));
      return { answer: {} };
    }
    throw new Error(`unexpected command ${String(command)}`);
  });
  return { ...fake, client: fake.client as unknown as DynamoDBDocumentClient, table };
}

/** Kinesis that accepts every PutRecords entry. */
function acceptingKinesis() {
  const fake = fakeClient((command) => {
    const { Records = [] } = (command as PutRecordsCommand).input;
    return {
      answer: {
        FailedRecordCount: 0,
        Records: Records.map((_, i) => ({ SequenceNumber: String(i + 1), ShardId: "shardId-000000000000" })),
      },
    };
  });
  return { ...fake, client: fake.client as unknown as KinesisClient };
}

const registry = new ToolRegistry(
  [
    defineTool({
      name: "test.echo",
      description: "Answers with its arguments.",
      inputSchema: { type: "object" },
      timeoutMs: 10_000,
      concurrency: 10,
      run: async (args) => ({ echoed: args }),
    }),
  ],
  compileWithAjv(),
);

const jobRecord = (messageId: string, callId: string, groupId?: string): SQSRecord =>
  sqsRecord({
    messageId,
    ...(groupId !== undefined ? { groupId } : {}),
    body: encodeToolCallJob({
      specVersion: CURRENT_SPEC_VERSION,
      callId,
      sessionId: groupId ?? "session-1",
      tool: "test.echo",
      arguments: { callId },
      enqueuedAt: "2026-12-01T00:00:00.000Z",
    }),
  });

/** Whether a command is the tool-calls table's write of the completed call `callId`. */
const completesCall = (callId: string) => (command: unknown) =>
  command instanceof PutCommand &&
  command.input.TableName === "tool-calls" &&
  (command.input.Item as { callId?: string; status?: string }).callId === callId &&
  (command.input.Item as { status?: string }).status === "completed";

function deps(mode: QueueMode, hang: (command: unknown) => boolean, concurrency = 10) {
  const dynamo = memoryDynamo(hang);
  const kinesis = acceptingKinesis();
  const workerDeps: WorkerDeps = {
    mode,
    registry,
    toolCalls: new ToolCallStore({ client: dynamo.client, tableName: "tool-calls" }),
    idempotency: new IdempotencyStore({
      client: dynamo.client,
      tableName: "dedupe",
      scope: "worker",
      retentionSeconds: 86_400,
    }),
    placeResult: async (_callId, json) => ({
      location: { kind: "inline" },
      output: json,
      sizeBytes: json.length,
    }),
    publish: async (events, options = {}) => {
      await putAllRecords(kinesis.client, { streamName: "events" }, events.map(encodeLifecycleEventRecord), {
        ...options,
        sleep: async () => undefined,
      });
    },
    deadLetter: async () => {
      throw new Error("no poison message in these batches");
    },
    logger: silentLogger,
    concurrency,
    // Real time, since the abort is a timer: 4 s invocations, so nothing new starts after 2 s and the
    // requests still open are aborted at 3 s. The faked requests that answer do so at once.
    deadlineMarginMs: 2_000,
  };
  return { workerDeps, dynamo, kinesis };
}

const context = () => lambdaContext({ timeoutMs: 4_000 });
const statusOf = (dynamo: ReturnType<typeof memoryDynamo>, callId: string) =>
  dynamo.table("tool-calls").get(callId)?.status;

describe("a request that never answers is aborted at the invocation's deadline (standard queue, §2.3)", () => {
  it("fails its job alone: reported with InvocationDeadlineError, the other jobs stored and acknowledged", async () => {
    const records = [jobRecord("m-1", "call-1"), jobRecord("m-2", "call-2"), jobRecord("m-3", "call-3")];
    const { workerDeps, dynamo, kinesis } = deps("standard", completesCall("call-2"));

    const { response, summary, outcome } = await processToolCallJobs(records, context(), workerDeps);

    expect(dynamo.aborted).toEqual([expect.any(PutCommand)]);
    expect(dynamo.unbounded).toEqual([]);
    expect(kinesis.unbounded).toEqual([]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: "m-2" }]);
    expect(summary).toMatchObject({ messages: 3, succeeded: 2, retried: 1, notStarted: 0 });
    const failed = outcome.outcomes[1];
    expect(failed?.status).toBe(ItemStatus.Failed);
    const error = failed?.status === ItemStatus.Failed ? failed.error : undefined;
    expect(error).toBeInstanceOf(InvocationDeadlineError);
    expect(error).toMatchObject({
      code: "invocation-deadline",
      stage: DeadlineStage.Requests,
      reserveMs: 1_000,
    });
    // call-2 was taken for its claim (its `started` stored), its outcome never.
    expect([statusOf(dynamo, "call-1"), statusOf(dynamo, "call-2"), statusOf(dynamo, "call-3")]).toEqual([
      "completed",
      "started",
      "completed",
    ]);
    // The aborted job's claim cannot be released once its requests are cut off, so its lease ended with
    // them, before the invocation answered: the redelivery can claim it (docs/idempotency.md).
    const dedupe = dynamo.table("dedupe");
    expect(dedupe.get("worker#call-1")?.status).toBe("COMPLETED");
    const held = dedupe.get("worker#call-2");
    expect(held?.status).toBe("IN_PROGRESS");
    // Both the lease and the abort are counted from the same remaining time; 5 ms for their roundings.
    expect(Number(held?.leaseExpiresAt)).toBeLessThanOrEqual(Date.now() + 5);
  });

  it("nothing new starts after the margin: one slot held by the hanging job, the others not started and reported", async () => {
    const records = [jobRecord("m-1", "call-1"), jobRecord("m-2", "call-2"), jobRecord("m-3", "call-3")];
    const { workerDeps, dynamo } = deps("standard", completesCall("call-1"), 1);

    const { response, summary, outcome } = await processToolCallJobs(records, context(), workerDeps);

    expect(dynamo.aborted).toHaveLength(1);
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(["m-1", "m-2", "m-3"]);
    expect(summary).toMatchObject({ succeeded: 0, retried: 3, notStarted: 2, deadlineReached: true });
    expect(outcome.outcomes.slice(1)).toEqual([
      { status: ItemStatus.NotStarted, reason: NotStartedReason.Deadline },
      { status: ItemStatus.NotStarted, reason: NotStartedReason.Deadline },
    ]);
  });

  it("a publish that never answers is aborted too, and the job is reported", async () => {
    const records = [jobRecord("m-1", "call-1"), jobRecord("m-2", "call-2")];
    const { workerDeps } = deps("standard", () => false);
    const hangingKinesis = fakeClient((command) => {
      const entries = (command as PutRecordsCommand).input.Records ?? [];
      if (
        entries.some((e) =>
          Buffer.from(e.Data ?? [])
            .toString("utf8")
            .includes('"call-2"'),
        )
      )
        return "hang";
      return {
        answer: {
          FailedRecordCount: 0,
          Records: entries.map((_, i) => ({
            SequenceNumber: String(i + 1),
            ShardId: "shardId-000000000000",
          })),
        },
      };
    });
    const publishing: WorkerDeps = {
      ...workerDeps,
      publish: async (events, options = {}) => {
        await putAllRecords(
          hangingKinesis.client as unknown as KinesisClient,
          { streamName: "events" },
          events.map(encodeLifecycleEventRecord),
          { ...options, sleep: async () => undefined },
        );
      },
    };

    const { response, summary, outcome } = await processToolCallJobs(records, context(), publishing);

    expect(hangingKinesis.aborted.length).toBeGreaterThanOrEqual(1);
    expect(hangingKinesis.unbounded).toEqual([]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: "m-2" }]);
    expect(summary).toMatchObject({ succeeded: 1, retried: 1 });
    // Reported as the deadline, as every other aborted request is (docs/tool-workers.md "invocation-deadline"),
    // not as a stream that refused the events.
    const failed = outcome.outcomes[1];
    expect(failed?.status === ItemStatus.Failed ? failed.error : undefined).toMatchObject({
      name: "InvocationDeadlineError",
      code: "invocation-deadline",
      cause: { name: "PutRecordsIncompleteError" },
    });
  });
});

describe("a request that never answers on a FIFO queue (§3)", () => {
  it("reports the job and every later job of its group, in order; the other group is processed in order", async () => {
    const records = [
      jobRecord("a-1", "call-a1", "A"),
      jobRecord("b-1", "call-b1", "B"),
      jobRecord("a-2", "call-a2", "A"),
      jobRecord("b-2", "call-b2", "B"),
      jobRecord("a-3", "call-a3", "A"),
    ];
    const order: string[] = [];
    const { workerDeps, dynamo } = deps("fifo", (command) => {
      if (command instanceof PutCommand && command.input.TableName === "tool-calls") {
        const item = command.input.Item as { callId: string; status: string };
        order.push(`${item.callId} ${item.status}`);
      }
      return completesCall("call-a2")(command);
    });

    const { response, summary, outcome } = await processToolCallJobs(records, context(), workerDeps);

    expect(dynamo.aborted).toHaveLength(1);
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(["a-2", "a-3"]);
    expect(outcome.outcomes[4]).toEqual({
      status: ItemStatus.NotStarted,
      reason: NotStartedReason.KeyStopped,
    });
    expect(summary).toMatchObject({ succeeded: 3, retried: 2 });
    // Each group's writes in its order (each job taken, then its outcome); a-3 never ran.
    expect(order.filter((c) => c.startsWith("call-a"))).toEqual([
      "call-a1 started",
      "call-a1 completed",
      "call-a2 started",
      "call-a2 completed",
    ]);
    expect(order.filter((c) => c.startsWith("call-b"))).toEqual([
      "call-b1 started",
      "call-b1 completed",
      "call-b2 started",
      "call-b2 completed",
    ]);
    expect(statusOf(dynamo, "call-a3")).toBeUndefined();
  });
});

describe("the other request paths: S3, the DLQ, and the bookkeeping after the batch", () => {
  it("a result object and a DLQ send that never answer are aborted: both messages reported, neither acknowledged", async () => {
    const poison = sqsRecord({ messageId: "m-poison", body: "not a job" });
    const records = [jobRecord("m-1", "call-1"), jobRecord("m-2", "call-2"), poison];
    const { workerDeps, dynamo } = deps("standard", () => false);
    // Every result goes to S3 (inline limit 10 bytes); call-2's object never answers.
    const s3 = fakeClient((command) =>
      (command as PutObjectCommand).input.Key?.includes("call-2") ? "hang" : { answer: {} },
    );
    const sqs = fakeClient(() => "hang");
    const paths: WorkerDeps = {
      ...workerDeps,
      placeResult: (callId, json, options) =>
        placeResult(s3.client as unknown as S3Client, "results", callId, json, 10, options),
      deadLetter: (record, reason, options) =>
        sendToDeadLetterQueue(sqs.client as unknown as SQSClient, "dlq-url", record, reason, options),
    };

    const { response, summary } = await processToolCallJobs(records, context(), paths);

    expect([s3.unbounded, sqs.unbounded]).toEqual([[], []]);
    expect(s3.aborted).toHaveLength(1);
    expect(sqs.aborted).toHaveLength(1);
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(["m-2", "m-poison"]);
    expect(summary).toMatchObject({ succeeded: 1, retried: 2, deadLettered: 0 });
    expect([statusOf(dynamo, "call-1"), statusOf(dynamo, "call-2")]).toEqual(["completed", "started"]);
  });

  it("the dead-lettered mark is aborted at the bookkeeping's share, the visibility change then sends nothing; the job is still reported", async () => {
    // call-1's completion never answers (aborted at 3 s of 4); it is at its last receive, so the worker then
    // marks it dead-lettered, a write that never answers either and ends at 3.5 s.
    const records = [sqsRecord({ messageId: "m-1", body: jobRecord("m-1", "call-1").body, receiveCount: 3 })];
    const { workerDeps, dynamo } = deps("standard", (command) => {
      if (!(command instanceof PutCommand) || command.input.TableName !== "tool-calls") return false;
      const status = (command.input.Item as { status?: string }).status;
      return status === "completed" || status === "dead-lettered";
    });
    let visibilityRequests = 0;
    const sqs = fakeClient(() => {
      visibilityRequests += 1;
      return "hang";
    });
    const settling: WorkerDeps = {
      ...workerDeps,
      deadLetterAfter: { maxReceiveCount: 3, queue: "dlq-url" },
      redelivery: {
        backoff: { baseMs: 1_000, capMs: 10_000 },
        changeVisibility: (queueUrl, changes, signal) =>
          changeMessageVisibility(sqs.client as unknown as SQSClient, queueUrl, changes, signal),
      },
    };

    const { response, summary } = await processToolCallJobs(records, context(), settling);

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: "m-1" }]);
    expect(summary).toMatchObject({ retried: 1, leavingForDlq: 0, backedOff: 0 });
    // Both writes were sent with a signal still running and aborted later (the fake refuses a request sent
    // with one already aborted without recording it): the mark had the bookkeeping's own time, and used it
    // up, so the visibility change found no time left and sent nothing (the job returns after the
    // visibility timeout instead of its backoff; nothing is lost).
    const statuses = dynamo.aborted.map((c) => ((c as PutCommand).input.Item as { status: string }).status);
    expect(statuses).toEqual(["completed", "dead-lettered"]);
    expect([dynamo.unbounded, sqs.unbounded]).toEqual([[], []]);
    expect(visibilityRequests).toBe(0);
  });
});
