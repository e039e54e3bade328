import { rm } from "node:fs/promises";
import { join } from "node:path";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { PutRecordsCommand } from "@aws-sdk/client-kinesis";
import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { CURRENT_SPEC_VERSION, encodeLifecycleEvent, encodeToolCallJob } from "@mcp-pipeline/contracts";
import { bundleAll } from "@mcp-pipeline/emulators/testing";
import { LocalPipeline, STUCK_PREFIX, stuckWrites } from "@mcp-pipeline/local-runtime";
import { listQuarantine, peekMessages } from "@mcp-pipeline/recovery";
import { loadSettings } from "@mcp-pipeline/settings";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recover, statsJob } from "../run-recover.js";

/**
 * `triage` and `status` as on-call runs them (issue 26, items 8 and 9), against the whole pipeline on the
 * emulators with the variables `npm start -- --serve` prints, after real failures of each kind: records the
 * processor's event source gave up on (writes refused until the downstream "recovers"), a record that is
 * not JSON, a body that is not a job, a job SQS moved to the DLQ, and a FIFO group held by a job that keeps
 * failing.
 */
const root = join(import.meta.dirname, "../../../..");
let dist: string;
let pipeline: LocalPipeline;
let env: Record<string, string>;

async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const until = Date.now() + 150_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const status = async (callId: string) =>
  (
    await pipeline.dynamodb.send(
      new GetItemCommand({
        TableName: pipeline.names.toolCallsTable,
        Key: { callId: { S: callId } },
        ConsistentRead: true,
      }),
    )
  ).Item?.status?.S;

const requested = (callId: string, sessionId: string, minutesAgo: number) =>
  encodeLifecycleEvent({
    specVersion: CURRENT_SPEC_VERSION,
    type: "tool_call.requested",
    eventId: `ev-${callId}`,
    callId,
    sessionId,
    tool: "load.latency",
    occurredAt: new Date(Date.now() - minutesAgo * 60_000).toISOString(),
    argumentsDigest: "2".repeat(64),
  });

beforeAll(async () => {
  dist = await bundleAll();
  const dev = await loadSettings(root, "dev");
  const settings = {
    ...dev,
    // One retry: records whose writes are refused reach the failure queue quickly (§1.3).
    processor: { ...dev.processor, esm: { ...dev.processor.esm, maximum_retry_attempts: 1 } },
    // The FIFO job that keeps failing keeps its group stuck for the whole test, never reaching the DLQ.
    fifo_worker: { ...dev.fifo_worker, queue: { ...dev.fifo_worker.queue, max_receive_count: 1000 } },
  };
  pipeline = new LocalPipeline({
    settings,
    timeScale: 10,
    distDir: dist,
    processorDynamoDbFault: stuckWrites,
  });
  await pipeline.start();
  // What `npm start -- --serve` prints (local/runtime/src/pipeline/serve-env.ts).
  env = {
    AWS_REGION: pipeline.region,
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_ENDPOINT_URL_KINESIS: pipeline.endpoints.kinesis,
    AWS_ENDPOINT_URL_SQS: pipeline.endpoints.sqs,
    AWS_ENDPOINT_URL_S3: pipeline.endpoints.s3,
    AWS_ENDPOINT_URL_DYNAMODB: pipeline.endpoints.dynamodb,
    AWS_ENDPOINT_URL_STS: pipeline.endpoints.sqs,
    STREAM_NAME: pipeline.names.stream,
    TOOL_CALLS_TABLE: pipeline.names.toolCallsTable,
    QUARANTINE_BUCKET: pipeline.names.quarantineBucket,
    TOOL_JOBS_QUEUE_URL: pipeline.queues.toolJobs.url,
    TOOL_JOBS_DLQ_URL: pipeline.queues.toolJobsDlq.url,
    SESSION_JOBS_QUEUE_URL: pipeline.queues.sessionJobs.url,
    SESSION_JOBS_DLQ_URL: pipeline.queues.sessionJobsDlq.url,
    STREAM_FAILURES_QUEUE_URL: pipeline.queues.streamFailures.url,
    STREAM_FAILURES_DLQ_URL: pipeline.queues.streamFailuresDlq.url,
  };
}, 300_000);
afterAll(async () => {
  await pipeline?.stop();
  if (dist) await rm(dist, { recursive: true, force: true });
});

describe("the night's failures, in one view and then recovered", () => {
  it("nothing waits on a fresh stack: triage and status exit 0", async () => {
    const triage = await recover(["triage"], env);
    expect(triage.out).toContain("nothing waits");
    expect(triage.code).toBe(0);
    const health = await recover(["status"], env);
    expect(health.out).toContain("all clear");
    expect(health.code).toBe(0);
  });

  it("triage groups every failure by reason, labels it, and names the next command; following them recovers", async () => {
    const stuck = [`${STUCK_PREFIX}triage-1`, `${STUCK_PREFIX}triage-2`];
    await pipeline.kinesis.send(
      new PutRecordsCommand({
        StreamName: pipeline.names.stream,
        Records: [
          ...stuck.map((callId, i) => ({
            PartitionKey: `session-t${i}`,
            Data: new TextEncoder().encode(
              encodeLifecycleEvent({
                specVersion: CURRENT_SPEC_VERSION,
                type: "tool_call.requested",
                eventId: `ev-${callId}`,
                callId,
                sessionId: `session-t${i}`,
                tool: "text.stats",
                // Requested five minutes ago, and no job is ever sent for them: status names them below.
                occurredAt: new Date(Date.now() - 5 * 60_000).toISOString(),
                argumentsDigest: "1".repeat(64),
              }),
            ),
          })),
          { PartitionKey: "session-bad", Data: new TextEncoder().encode("not json at all") },
        ],
      }),
    );
    // A body that is not a job: the tool worker dead-letters it with its reason.
    await pipeline.sqs.send(
      new SendMessageCommand({ QueueUrl: pipeline.queues.toolJobs.url, MessageBody: '{"not":"a job"}' }),
    );
    // A valid job as SQS leaves it in the DLQ after maxReceiveCount receives: no reason attribute.
    const job = statsJob("triage-from-dlq", "session-dlq");
    await pipeline.sqs.send(
      new SendMessageCommand({ QueueUrl: pipeline.queues.toolJobsDlq.url, MessageBody: job }),
    );
    await eventually("the failures in the quarantine and the DLQ", async () => {
      const entries = await listQuarantine(pipeline.s3, pipeline.names.quarantineBucket);
      const { messages } = await peekMessages(pipeline.sqs, pipeline.queues.toolJobsDlq.url);
      const given = entries.filter((e) => e.record.reason.code === "RetryAttemptsExhausted").length;
      return given === 2 && entries.length === 3 && messages.length === 2 ? true : undefined;
    });

    const triage = await recover(["triage"], env);
    expect(triage.code).toBe(4);
    expect(triage.out).toContain(`account 000000000000, region ${pipeline.region}`);
    expect(triage.out).toContain("4 groups wait (2 retryable: fix the cause, then the command; 2 permanent");
    expect(triage.out).toMatch(
      /quarantine\s+RetryAttemptsExhausted\s+retryable\s+2 .*\n\s+next: npm run recover -- replay --reason RetryAttemptsExhausted/,
    );
    expect(triage.out).toMatch(
      /tool-jobs DLQ\s+max-receives\s+retryable\s+1 .*\n\s+next: npm run recover -- redrive --queue tool-jobs --reason max-receives/,
    );
    expect(triage.out).toMatch(
      /quarantine\s+bad-json\s+permanent\s+1 .*\n\s+next: npm run recover -- inspect --list --reason bad-json/,
    );
    expect(triage.out).toMatch(
      /tool-jobs DLQ\s+schema-violation\s+permanent\s+1 .*\n\s+next: npm run recover -- peek --queue tool-jobs --reason schema-violation/,
    );

    // The downstream recovers; then each retryable group's command, as triage printed it, with --yes.
    pipeline.faultsActive = false;
    const commands = [...triage.out.matchAll(/next: npm run recover -- (.*)$/gm)].map((m) =>
      (m[1] as string).split(" "),
    );
    const replay = commands.find((c) => c[0] === "replay") as string[];
    const redrive = commands.find((c) => c[0] === "redrive") as string[];
    expect((await recover([...replay, "--yes"], env)).code).toBe(0);
    const moved = await recover([...redrive, "--yes", "--watch", "3"], env);
    expect(moved.code).toBe(0);
    expect(moved.out).toMatch(/^1 moved back to .*tool-jobs \(mover\)/m);
    await eventually("the replayed calls and the redriven job applied", async () => {
      const states = await Promise.all([...stuck, "triage-from-dlq"].map(status));
      return states.every((s) => s === "requested" || s === "completed") ? states : undefined;
    });
    const peek = await recover(commands.find((c) => c[0] === "peek") as string[], env);
    expect(peek.code).toBe(0);
    expect(peek.out).toContain('{"not":"a job"}');

    // What is left is permanent: for a person, not a command.
    const after = await recover(["triage", "--json"], env);
    expect(after.code).toBe(4);
    const left = JSON.parse(after.out) as { groups: { reason: string; kind: string }[]; replayed: number };
    expect(left.groups.map((g) => [g.reason, g.kind]).sort()).toEqual([
      ["bad-json", "permanent"],
      ["schema-violation", "permanent"],
    ]);
    expect(left.replayed).toBe(2);
  });

  it("status shows each queue, the FIFO group stuck behind a failing job and for how long, and exits 4", async () => {
    // A session's first job fails every time (transiently) and holds the second behind it (§3). Their
    // requests were made ten minutes ago.
    for (const [callId, minutes] of [
      ["held-head", 10],
      ["held-behind", 9],
    ] as const)
      await pipeline.kinesis.send(
        new PutRecordsCommand({
          StreamName: pipeline.names.stream,
          Records: [
            {
              PartitionKey: "session-held",
              Data: new TextEncoder().encode(requested(callId, "session-held", minutes)),
            },
          ],
        }),
      );
    for (const [callId, args] of [
      ["held-head", { latencyMs: 0, fail: "transient" }],
      ["held-behind", { latencyMs: 0 }],
    ] as const)
      await pipeline.sqs.send(
        new SendMessageCommand({
          QueueUrl: pipeline.queues.sessionJobs.url,
          MessageGroupId: "session-held",
          MessageDeduplicationId: callId,
          MessageBody: encodeToolCallJob({
            specVersion: CURRENT_SPEC_VERSION,
            callId,
            sessionId: "session-held",
            tool: "load.latency",
            arguments: args,
            enqueuedAt: new Date().toISOString(),
          }),
        }),
      );
    await eventually("the head job failing and retried", async () =>
      (await status("held-head")) === "retrying" && (await status("held-behind")) === "requested"
        ? true
        : undefined,
    );
    const run = await recover(["status"], env);
    expect(run.code).toBe(4);
    expect(run.out).toMatch(
      /stuck FIFO groups of mcp-dev-session-jobs\.fifo \(oldest unfinished call waiting over \d+ s; \d+ calls read\):/,
    );
    // The head keeps being redelivered while status reads: between two attempts it is "retrying", during
    // one it is "started". Either is the truth at the moment of reading.
    expect(run.out).toMatch(
      /session-held: call held-head \(load\.latency, (retrying|started), \d+ attempts\) waits (9|10) min \d+ s; 2 unfinished in the group/,
    );
    expect(run.out).toMatch(/mcp-dev-session-jobs\.fifo\s+\d+\s+\d+\s+\d+/);
    // The DLQ still holds the permanent message: counted and aged by reading it (no CloudWatch here).
    expect(run.out).toMatch(/mcp-dev-tool-jobs-dlq\s+1\s+0\s+0\s+\d+ s \(read\)/);
    expect(run.out).toContain("processor iterator age: n/a (no CloudWatch)");
    expect(run.out).toContain(
      "CloudWatch: n/a (no endpoint for CLOUDWATCH (AWS_ENDPOINT_URL_CLOUDWATCH) while S3, SQS, STS are at",
    );
    // Each endpoint for its own services: the emulators' ports differ.
    expect(run.out).toMatch(
      /; KINESIS is at http:\/\/127\.0\.0\.1:\d+; DYNAMODB is at http:\/\/127\.0\.0\.1:\d+\)/,
    );
    expect(run.out).toContain("attention:\n  - 1 message waits in mcp-dev-tool-jobs-dlq (the tool-jobs DLQ)");
    expect(run.out).toMatch(
      / {2}- 1 FIFO group stuck over \d+ s \(longest: session-held, call held-head, (9|10) min \d+ s\)/,
    );
    // The calls replayed above were requested five minutes ago and never given a job: not a stuck group.
    expect(run.out).toMatch(
      / {2}- 2 calls requested over \d+ s ago that no worker has started \(sessions session-t0, session-t1\): their jobs wait in a backlog, or were never sent/,
    );
    const json = JSON.parse((await recover(["status", "--json"], env)).out);
    expect(json.stuckGroups.groups).toEqual([
      expect.objectContaining({ group: "session-held", callId: "held-head", unfinished: 2 }),
    ]);
  });
});
