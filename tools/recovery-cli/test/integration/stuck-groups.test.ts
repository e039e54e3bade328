import { DynamoDBClient, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { EmulatorStack, emulatorClientOptions, type StackQueue } from "@mcp-pipeline/emulators";
import { InterruptedError } from "@mcp-pipeline/recovery";
import { toolCallsTableDefinition } from "@mcp-pipeline/tool-calls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitingGroups } from "../../src/fifo-groups.js";
import { recover, stackEnvironment } from "../run-recover.js";

/**
 * `status`'s stuck FIFO groups (issue 26, item 9) during the drill's stall: a job's last attempt fails and
 * the table says dead-lettered at once, but SQS moves the message to the DLQ only on a receive after that
 * attempt's visibility timeout (docs/aws-semantics.md §2.3); until then it holds its group (§3). status
 * read only requested, started and retrying calls, and said "none" for the whole stall
 * (`npm start -- --serve --drill`, `status --stuck-after 1`, the session-jobs queue 4 visible, 1 in flight).
 */
let stack: EmulatorStack;
let dynamodb: DynamoDBClient;
let env: Record<string, string>;
const table = "mcp-dev-tool-calls";
const VISIBILITY = 18;

/** A call as the processor leaves it once the worker's dead-lettered event is applied. */
async function deadLettered(
  callId: string,
  sessionId: string,
  startedSecondsAgo: number,
  lastSecondsAgo: number,
) {
  const at = (s: number) => new Date(Date.now() - s * 1000).toISOString();
  await dynamodb.send(
    new PutItemCommand({
      TableName: table,
      Item: {
        callId: { S: callId },
        sessionId: { S: sessionId },
        tool: { S: "http.request" },
        status: { S: "dead-lettered" },
        attempts: { N: "5" },
        startedAt: { S: at(startedSecondsAgo) },
        lastEventAt: { S: at(lastSecondsAgo) },
        version: { N: "7" },
      },
    }),
  );
}

beforeAll(async () => {
  stack = await EmulatorStack.start({ dynamodb: {}, sqsS3: true });
  dynamodb = new DynamoDBClient(emulatorClientOptions(stack.dynamodb));
  await stack.createTable(toolCallsTableDefinition(table));
  const fifo = { FifoQueue: "true" };
  const q = (await stack.createQueue({
    name: "mcp-dev-session-jobs.fifo",
    sharedAttributes: fifo,
    attributes: { VisibilityTimeout: String(VISIBILITY) },
    dlq: { name: "mcp-dev-session-jobs-dlq.fifo", maxReceiveCount: 5 },
  })) as Required<StackQueue>;
  // The jobs waiting behind the held one.
  const sqs = sqsClient(emulatorClientOptions(stack.sqsS3));
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: q.url,
      MessageBody: "{}",
      MessageGroupId: "held",
      MessageDeduplicationId: "1",
    }),
  );
  sqs.destroy();
  env = stackEnvironment(stack, {
    AWS_ENDPOINT_URL_DYNAMODB: stack.dynamodb.endpoint,
    TOOL_CALLS_TABLE: table,
    SESSION_JOBS_QUEUE_URL: q.url,
    SESSION_JOBS_DLQ_URL: q.dlqUrl,
  });
});
afterAll(async () => {
  dynamodb?.destroy();
  await stack?.stop();
});

describe("status: stuck FIFO groups", () => {
  it("a group held by a job dead-lettered less than a visibility timeout ago is stuck; one dead-lettered long ago has moved on", async () => {
    await deadLettered("held-0", "held", 10, 2);
    await deadLettered("gone-0", "gone", 600, 590);
    const run = await recover(["status", "--stuck-after", "5"], env);
    expect(run.code, run.out + run.err).toBe(4);
    expect(run.out).toMatch(
      /^ {2}held: call held-0 \(http\.request, dead-lettered, 5 attempts\) waits (9|10|11) s; 1 unfinished in the group \(its last attempt failed: SQS moves it to the DLQ once its visibility timeout passes, then the group goes on\)$/m,
    );
    expect(run.out).toMatch(/ {2}- 1 FIFO group stuck over 5 s \(longest: held, call held-0/);
    expect(run.out).not.toContain("gone");
  });
});

describe("status: a tool-calls table it cannot scan", () => {
  it("is not 'nothing needs a person': the stuck groups are unknown, said under attention, exit 4", async () => {
    const run = await recover(["status", "--table", "mcp-dev-tool-callz"], env);
    expect(run.code, run.out + run.err).toBe(4);
    expect(run.out).toContain(
      "stuck FIFO groups: n/a (scanning mcp-dev-tool-callz failed: ResourceNotFoundException",
    );
    expect(run.out).toMatch(
      /^ {2}- stuck FIFO groups are unknown: scanning mcp-dev-tool-callz failed: ResourceNotFoundException/m,
    );
  });
});

describe("status: Ctrl-C during the scan of the tool-calls table", () => {
  it("stops before its next page with the InterruptedError (the table has no index by status: a big one is many pages)", async () => {
    const ctrlC = new AbortController();
    ctrlC.abort(new InterruptedError("SIGINT"));
    const stopped = waitingGroups(
      dynamodb,
      table,
      { now: Date.now(), visibilityTimeoutSeconds: VISIBILITY },
      ctrlC.signal,
    );
    await expect(stopped).rejects.toBeInstanceOf(InterruptedError);
    await expect(stopped).rejects.toMatchObject({ signal: "SIGINT" });
  });
});

describe("status: a session id is anyone's text", () => {
  it("shows its line breaks and overrides as escapes, never obeys them", async () => {
    await deadLettered("odd-0", "odd\r\u202esession", 10, 2);
    const run = await recover(["status", "--stuck-after", "5"], env);
    expect(run.out).not.toMatch(/[\r\u202e]/);
    expect(run.out).toContain("  odd\\r\\u202esession: call odd-0 (http.request, dead-lettered, 5 attempts)");
  });
});
