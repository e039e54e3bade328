import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { sendToDeadLetterQueue, sqsClient } from "@mcp-pipeline/aws/sqs-client";
import {
  emulatorClientOptions,
  type RunningEmulator,
  startSqsS3,
  toSqsEventRecord,
} from "@mcp-pipeline/emulators";
import { captureStreams } from "@mcp-pipeline/emulators/testing";
import { countMessages } from "@mcp-pipeline/recovery";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { main } from "../../src/index.js";

let emulator: RunningEmulator;
let sqs: SQSClient;

beforeAll(async () => {
  emulator = await startSqsS3();
  sqs = sqsClient(emulatorClientOptions(emulator));
});
afterAll(async () => {
  await emulator?.stop();
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

/** Runs the CLI against the emulator, the way an operator's shell would point it there. */
async function run(argv: string[]) {
  vi.stubEnv("AWS_ENDPOINT_URL_SQS", emulator.endpoint);
  vi.stubEnv("AWS_ENDPOINT_URL_STS", emulator.endpoint);
  vi.stubEnv("AWS_REGION", "us-east-1");
  vi.stubEnv("AWS_ACCESS_KEY_ID", "test");
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", "test");
  const { result: code, out, err } = await captureStreams(() => main(argv, process.env));
  return { code, err, out };
}

describe("npm run recover -- redrive (issue 14: a redrive that ends)", () => {
  it("ends with a summary while the messages are still poison, printing progress, and the dry run counts what is there", async () => {
    const { QueueUrl: dlq = "" } = await sqs.send(new CreateQueueCommand({ QueueName: "cli-tool-jobs-dlq" }));
    const dlqArn = (
      await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ["QueueArn"] }))
    ).Attributes?.QueueArn as string;
    // Linked as terraform/modules/queue links them: the redrive goes back to this source only.
    const { QueueUrl: source = "" } = await sqs.send(
      new CreateQueueCommand({
        QueueName: "cli-tool-jobs",
        Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 3 }) },
      }),
    );
    const sourceArn = (
      await sqs.send(new GetQueueAttributesCommand({ QueueUrl: source, AttributeNames: ["QueueArn"] }))
    ).Attributes?.QueueArn as string;
    for (let i = 0; i < 3; i++)
      await sqs.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: `{"poison":${i}` }));

    // The tool worker: each of these jobs is still poison and goes straight back to the DLQ.
    let done = false;
    const worker = (async () => {
      for (;;) {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: source,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 1,
            MessageAttributeNames: ["All"],
            MessageSystemAttributeNames: ["All"],
          }),
        );
        for (const m of Messages) {
          await sendToDeadLetterQueue(sqs, dlq, toSqsEventRecord(m, sourceArn), {
            code: "bad-json",
            message: "still not JSON",
          });
          await sqs.send(new DeleteMessageCommand({ QueueUrl: source, ReceiptHandle: m.ReceiptHandle }));
        }
        if (done && Messages.length === 0) return;
      }
    })();

    // --watch 0: this run is about ending; what comes back is redrive-guards.test.ts's business.
    const moved = await run([
      "redrive",
      "--from",
      dlq,
      "--to",
      source,
      "--mode",
      "mover",
      "--yes",
      "--watch",
      "0",
    ]).finally(() => {
      done = true;
    });
    await worker;
    expect(moved.code).toBe(0);
    expect(moved.err).toContain("moved 3");
    expect(moved.out).toMatch(/^3 moved back to .* \(mover\), 0 refused or not taken/m);
    expect(moved.out).toContain("arrived in the DLQ after the start");

    const dry = await run(["redrive", "--from", dlq, "--to", source, "--dry-run", "--json"]);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.out)).toMatchObject({ dryRun: true, read: 3, complete: true, toMove: 3 });
    // The count hid nothing: all three are there for the next run.
    expect(await countMessages(sqs, dlq)).toBe(3);
  });
});
