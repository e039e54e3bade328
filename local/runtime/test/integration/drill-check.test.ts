/**
 * drill:check's judgement of each kind of input where the drill test's recovery never leaves one: lost
 * (found nowhere), a job still in its queue, a poison message redriven back into its queue. A stack of
 * the emulators holds the calls, the queues and an empty quarantine; the ledger is made by hand.
 */
import { DynamoDBClient, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import {
  createBucketWhenReady,
  createQueueWhenReady,
  createTableWhenActive,
  type EmbeddedEmulators,
  startEmulators,
} from "@mcp-pipeline/emulators";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDrill, DrillOutcome } from "../../src/pipeline/drill-check.js";
import {
  DRILL_LEDGER_FORMAT,
  DrillExpectation,
  type DrillInput,
  type DrillLedger,
  type DrillQueue,
} from "../../src/pipeline/drill-ledger.js";

let emulators: EmbeddedEmulators;
let clients: { dynamodb: DynamoDBClient; sqs: SQSClient; s3: S3Client };
let ledger: Omit<DrillLedger, "inputs">;

const options = (endpoint: string) => ({
  endpoint,
  region: "us-east-1",
  credentials: { accessKeyId: "local", secretAccessKey: "local" },
});

beforeAll(async () => {
  emulators = await startEmulators();
  clients = {
    dynamodb: new DynamoDBClient(options(emulators.dynamodb.endpoint)),
    sqs: new SQSClient(options(emulators.sqsS3.endpoint)),
    s3: new S3Client({ ...options(emulators.sqsS3.endpoint), forcePathStyle: true }),
  };
  await createTableWhenActive(clients.dynamodb, {
    TableName: "calls",
    AttributeDefinitions: [{ AttributeName: "callId", AttributeType: "S" }],
    KeySchema: [{ AttributeName: "callId", KeyType: "HASH" }],
    BillingMode: "PAY_PER_REQUEST",
  });
  await createBucketWhenReady(clients.s3, { Bucket: "quarantine" });
  const queues = {} as Record<DrillQueue, { url: string; dlqUrl: string }>;
  for (const key of ["tool_jobs", "session_jobs", "stream_failures"] as const) {
    const { url } = await createQueueWhenReady(clients.sqs, { QueueName: key });
    const { url: dlqUrl } = await createQueueWhenReady(clients.sqs, { QueueName: `${key}-dlq` });
    queues[key] = { url, dlqUrl };
  }
  ledger = {
    formatVersion: DRILL_LEDGER_FORMAT,
    environment: "dev",
    region: "us-east-1",
    seed: 1,
    createdAt: "2026-12-07T00:00:00.000Z",
    resources: { stream: "s", toolCallsTable: "calls", quarantineBucket: "quarantine", queues },
    stalledGroup: "g",
  };
});

afterAll(async () => {
  for (const c of Object.values(clients ?? {})) c.destroy();
  await emulators?.stop();
});

const put = (callId: string, fields: Record<string, string>) =>
  clients.dynamodb.send(
    new PutItemCommand({
      TableName: "calls",
      Item: {
        callId: { S: callId },
        ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { S: v }])),
      },
    }),
  );
const send = (url: string, body: string) =>
  clients.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));

const job = (callId: string, queue: DrillQueue = "tool_jobs"): DrillInput => ({
  kind: "job",
  expect: DrillExpectation.Completed,
  queue,
  callId,
  body: `{"job":"${callId}"}`,
  fault: "down",
});
const poison = (queue: DrillQueue, body: string): DrillInput => ({
  kind: "poison-message",
  expect: DrillExpectation.Kept,
  queue,
  reason: "bad-json",
  body,
});

describe("drill:check", () => {
  it("judges each input lost, not done or done from where it is", async () => {
    await put("applied-event", { requestedAt: "2026-12-07T00:00:00.000Z" });
    await put("started-job", { status: "started" });
    await put("failed-job", { status: "failed" });
    await send(ledger.resources.queues.session_jobs.url, "queued");
    await send(ledger.resources.queues.tool_jobs.dlqUrl, '{"job":"in-dlq"}');
    await send(ledger.resources.queues.tool_jobs.dlqUrl, "kept poison");
    await send(ledger.resources.queues.session_jobs.url, "redriven poison");
    const inputs: DrillInput[] = [
      { kind: "event", expect: DrillExpectation.Applied, callId: "applied-event", data: "AA==", fault: "f" },
      { kind: "event", expect: DrillExpectation.Applied, callId: "lost-event", data: "AQ==", fault: "f" },
      { kind: "poison-record", expect: DrillExpectation.Kept, reason: "bad-json", data: "Ag==" },
      job("failed-job"),
      job("started-job"),
      job("queued-job", "session_jobs"),
      job("in-dlq"),
      job("lost-job", "stream_failures"),
      poison("tool_jobs", "kept poison"),
      poison("session_jobs", "redriven poison"),
      poison("stream_failures", "lost poison"),
    ];

    const verdict = await checkDrill(clients, { ...ledger, inputs });

    expect(verdict.inputs.map(({ outcome, where, next }) => ({ outcome, where, next }))).toEqual([
      { outcome: DrillOutcome.Done, where: "applied: in the tool-calls table", next: undefined },
      {
        outcome: DrillOutcome.Lost,
        where: "nowhere: not in the table, not in the quarantine",
        next: undefined,
      },
      {
        outcome: DrillOutcome.Lost,
        where: "nowhere: a permanent poison record is kept in the quarantine, never deleted",
        next: undefined,
      },
      { outcome: DrillOutcome.Done, where: "failed: in the tool-calls table", next: undefined },
      {
        outcome: DrillOutcome.NotDone,
        where:
          "not completed (the table says started): still in tool-jobs (being retried, or waiting behind its group)",
        next: "wait for it, or for it to reach the DLQ",
      },
      {
        outcome: DrillOutcome.NotDone,
        where: "not completed: still in session-jobs (being retried, or waiting behind its group)",
        next: "wait for it, or for it to reach the DLQ",
      },
      {
        outcome: DrillOutcome.NotDone,
        where: "in the tool-jobs DLQ",
        next: "redrive the tool-jobs DLQ once its downstream is back (docs/operations.md)",
      },
      {
        outcome: DrillOutcome.Lost,
        where: "nowhere: not in the table, stream-failures or its DLQ",
        next: undefined,
      },
      { outcome: DrillOutcome.Done, where: "kept in the tool-jobs DLQ (bad-json)", next: undefined },
      {
        outcome: DrillOutcome.NotDone,
        where: "back in session-jobs (redriven): its consumer sends it to the DLQ again",
        next: "wait for it to reach the DLQ again; permanent poison is not redriven (it cannot succeed)",
      },
      {
        outcome: DrillOutcome.Lost,
        where: "nowhere: permanent poison is kept in the stream-failures DLQ, never deleted",
        next: undefined,
      },
    ]);
    expect(verdict).toMatchObject({ done: false, counts: { done: 3, "not-done": 4, lost: 4 } });
  });
});
