import { ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { once } from "@mcp-pipeline/aws";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { consumerHandler, sqsRecords } from "@mcp-pipeline/batch/consumer-shell";
import {
  createQueueWhenReady,
  emulatorClientOptions,
  type RunningEmulator,
  startSqsS3,
} from "@mcp-pipeline/emulators";
import { lambdaContext, sqsRecord } from "@mcp-pipeline/emulators/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { dlqRedriveConfigSchema } from "../../src/config.js";
import {
  dlqRedriveDeps,
  dlqRedriveReport,
  parseManualAction,
  runManualAction,
  storeFailures,
} from "../../src/core.js";
import { dlqRedriveEnvironment } from "../environment.js";

// dlq-redrive builds its SQS client on first use (core.ts's sqsModule, handler.ts's `once`): a batch whose
// stray messages all need it at once builds it once, and a failed build keeps every message in the failure
// queue (reported in batchItemFailures, redelivered by SQS: docs/aws-semantics.md §2.3), not lost.

describe("dlq-redrive's SQS client, built on first use", () => {
  let sqsS3: RunningEmulator;
  let sqs: SQSClient;
  let dlqUrl: string;

  beforeAll(async () => {
    sqsS3 = await startSqsS3();
    sqs = sqsClient(emulatorClientOptions(sqsS3));
    ({ url: dlqUrl } = await createQueueWhenReady(sqs, { QueueName: "lazy-sqs-dlq" }));
  });
  afterAll(() => sqsS3?.stop());

  afterEach(() => vi.unstubAllEnvs());

  /**
   * dlq-redrive's handler (handler.ts, through the consumer shell) over this stack, with an SQS client whose
   * build fails the first `failures` times, as a chunk that cannot be loaded would.
   */
  function wired(failures: number) {
    const builds = { attempts: 0, succeeded: 0 };
    const env = {
      ...dlqRedriveEnvironment(sqsS3.endpoint, "lazy-sqs-quarantine", dlqUrl),
      POWERTOOLS_LOG_LEVEL: "CRITICAL",
    };
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    const options = emulatorClientOptions(sqsS3);
    const lazySqs = once(async () => {
      builds.attempts += 1;
      // Yields first, as an import does, so that every stray message asks before the first build ends.
      await new Promise((resolve) => setImmediate(resolve));
      if (builds.attempts <= failures) throw new Error("Cannot find module './chunk-SQS.mjs'");
      builds.succeeded += 1;
      return sqsClient(options);
    });
    const handler = consumerHandler({
      service: "dlq-redrive",
      config: dlqRedriveConfigSchema,
      records: sqsRecords,
      wire: (config, sandbox) =>
        dlqRedriveDeps(
          config,
          { s3: s3Client(options), kinesis: kinesisClient(options), sqs: lazySqs },
          sandbox,
        ),
      process: storeFailures,
      report: dlqRedriveReport,
      manual: { parse: parseManualAction, run: runManualAction },
    });
    return { handler, builds };
  }

  const strays = (prefix: string) =>
    ["a", "b", "c"].map((id) =>
      sqsRecord({ messageId: `${prefix}-${id}`, body: `not a failure record ${id}` }),
    );

  async function drained(): Promise<string[]> {
    const bodies: string[] = [];
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      if (Messages.length === 0) return bodies.sort();
      bodies.push(...Messages.map((m) => m.Body ?? ""));
    }
  }

  it("three stray messages at once build the client once and all reach the DLQ", async () => {
    const { handler, builds } = wired(0);
    const response = await handler({ Records: strays("together") }, lambdaContext());
    expect(response).toEqual({ batchItemFailures: [] });
    expect(builds).toEqual({ attempts: 1, succeeded: 1 });
    expect(await drained()).toEqual(["a", "b", "c"].map((id) => `not a failure record ${id}`));
  });

  it("a failed build keeps every message for SQS to redeliver, and the next batch builds it again", async () => {
    const { handler, builds } = wired(1);
    const records = strays("retried");
    const first = await handler({ Records: records }, lambdaContext());
    expect(first).toEqual({ batchItemFailures: records.map((r) => ({ itemIdentifier: r.messageId })) });
    expect(await drained()).toEqual([]);
    // SQS redelivers the three (docs/aws-semantics.md §2.3): the failed build was not kept.
    const again = await handler({ Records: records }, lambdaContext());
    expect(again).toEqual({ batchItemFailures: [] });
    expect(builds).toEqual({ attempts: 2, succeeded: 1 });
    expect(await drained()).toEqual(["a", "b", "c"].map((id) => `not a failure record ${id}`));
  });
});
