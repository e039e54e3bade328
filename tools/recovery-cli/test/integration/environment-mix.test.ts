import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { EmulatorStack, emulatorClientOptions, type StackQueue } from "@mcp-pipeline/emulators";
import { countMessages } from "@mcp-pipeline/recovery";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recover, stackEnvironment, statsJob } from "../run-recover.js";

/**
 * A shell that loaded one environment's variables (dev's, as `npm start -- --serve` prints them), then
 * told another's prefix: the variables won over `--prefix`, so `redrive --queue tool-jobs --prefix mcp-prod
 * --yes` moved dev's DLQ while the operator meant prod's (one account holds both, so the account check
 * passes). The mix is refused before any request, naming each variable.
 */
let stack: EmulatorStack;
let sqs: SQSClient;
let dev: Required<StackQueue>;
let prod: Required<StackQueue>;
let env: Record<string, string>;

beforeAll(async () => {
  stack = await EmulatorStack.start({ sqsS3: true });
  sqs = sqsClient(emulatorClientOptions(stack.sqsS3));
  const pair = async (prefix: string) =>
    (await stack.createQueue({
      name: `${prefix}-tool-jobs`,
      dlq: { name: `${prefix}-tool-jobs-dlq`, maxReceiveCount: 3 },
    })) as Required<StackQueue>;
  dev = await pair("mcp-dev");
  prod = await pair("mcp-prod");
  for (const q of [dev, prod])
    await sqs.send(new SendMessageCommand({ QueueUrl: q.dlqUrl, MessageBody: statsJob(`c-${q.arn}`, "s") }));
  env = stackEnvironment(stack, {
    STREAM_NAME: "mcp-dev-events",
    QUARANTINE_BUCKET: "mcp-dev-quarantine",
    TOOL_JOBS_QUEUE_URL: dev.url,
    TOOL_JOBS_DLQ_URL: dev.dlqUrl,
  });
});
afterAll(async () => {
  sqs?.destroy();
  await stack?.stop();
});

describe("--prefix against another environment's variables", () => {
  it("redrive --prefix mcp-prod in a shell of dev's variables is refused (exit 2) and moves nothing", async () => {
    const run = await recover(["redrive", "--queue", "tool-jobs", "--prefix", "mcp-prod", "--yes"], env);
    expect(await countMessages(sqs, dev.dlqUrl)).toBe(1);
    expect(await countMessages(sqs, dev.url)).toBe(0);
    expect(run.code, run.out + run.err).toBe(2);
    expect(run.err).toContain(
      "--prefix mcp-prod names the environment mcp-prod, but STREAM_NAME names mcp-dev-events",
    );
    expect(run.err).toContain("TOOL_JOBS_DLQ_URL names mcp-dev-tool-jobs-dlq");
    expect(run.err).toContain("QUARANTINE_BUCKET names mcp-dev-quarantine");
  });

  it.each([["triage"], ["status"]])(
    "%s --prefix mcp-prod does not report dev's queues as prod's",
    async (command) => {
      const run = await recover([command, "--prefix", "mcp-prod"], env);
      expect(run.code, run.out + run.err).toBe(2);
      expect(run.out).not.toContain("mcp-dev");
      expect(run.err).toContain("--prefix mcp-prod names the environment mcp-prod");
    },
  );

  it("a stale STREAM_NAME beside another environment's queue URLs is refused too", async () => {
    const run = await recover(["peek", "--queue", "tool-jobs"], { ...env, STREAM_NAME: "mcp-prod-events" });
    expect(run.code).toBe(2);
    expect(run.err).toContain("STREAM_NAME=mcp-prod-events names the environment mcp-prod, but");
    expect(run.err).toContain("TOOL_JOBS_QUEUE_URL names mcp-dev-tool-jobs");
  });

  it("the environment's own variables, or --prefix with them unset, act where they say", async () => {
    const own = await recover(["redrive", "--queue", "tool-jobs", "--dry-run"], env);
    expect(own.code, own.out + own.err).toBe(0);
    expect(own.out).toContain(`redrive ${dev.dlqArn}`);
    const prodShell = stackEnvironment(stack);
    const other = await recover(
      ["redrive", "--queue", "tool-jobs", "--prefix", "mcp-prod", "--dry-run"],
      prodShell,
    );
    expect(other.code, other.out + other.err).toBe(0);
    expect(other.out).toContain(`redrive ${prod.dlqArn}`);
    expect(other.out).toContain(`     to ${prod.arn}`);
  });
});
